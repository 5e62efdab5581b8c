//! The few calls into the C library that std does not wrap: per-thread nice
//! levels, glibc's heap settings and the file-mode mask. Every `unsafe`
//! block of lightbox-core is here.
#![allow(unsafe_code)]

/// The calling thread's nice (Linux's nice is per thread).
pub fn thread_nice() -> i32 {
    #[cfg(target_os = "linux")]
    // SAFETY: reads the calling thread's nice; for the calling thread it
    // cannot fail, so -1 is a nice, not an error.
    unsafe {
        libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t)
    }
    #[cfg(not(target_os = "linux"))]
    0
}

/// Sets the calling thread's nice. Lowering needs no privilege; a refusal
/// leaves it as it was.
pub fn set_thread_nice(nice: i32) {
    #[cfg(target_os = "linux")]
    // SAFETY: gettid and setpriority only set the calling thread's
    // scheduling attributes.
    unsafe {
        let tid = libc::gettid() as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, nice);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = nice;
}

/// Swaps the process's file-mode mask.
pub fn set_umask(mask: u32) {
    // SAFETY: umask only swaps the process's file-mode mask; it cannot fail.
    unsafe { libc::umask(mask as libc::mode_t) };
}

/// glibc's heap: at most `arenas` arenas, no private maps, and `kept`
/// bytes of free pages kept on each heap's top.
pub fn tune_heap(arenas: usize, kept: usize) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes glibc's allocation parameters; a
    // refused value leaves the default in place.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, arenas.min(64) as libc::c_int);
        libc::mallopt(libc::M_MMAP_MAX, 0);
        libc::mallopt(libc::M_TRIM_THRESHOLD, kept as libc::c_int);
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = (arenas, kept);
}

/// Hands every whole free page of every glibc arena back to the system.
pub fn trim_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory; it cannot fail.
    unsafe {
        libc::malloc_trim(0);
    }
}
