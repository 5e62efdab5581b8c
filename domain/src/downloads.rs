//! Downloads: the variants an owner can ask for, and the states a
//! download can be in (the rules: `availability`).

wire_enum! {
    /// A download's variant.
    pub enum Variant {
        /// A produced screen render (`crop` + `spec`, its version).
        Screen = "screen",
        /// The original.
        Full = "full",
        /// A motion photo's clip, cut from the original: its owner's only.
        Motion = "motion",
    }
}

wire_enum! {
    /// downloadStatus `state`, and 2006's `data.state`.
    pub enum DownloadState {
        Ready = "ready",
        /// The render is not produced yet.
        Preparing = "preparing",
        /// Failed, taken down, or the variant does not exist.
        Unavailable = "unavailable",
        /// The generation changed since the link was minted.
        Stale = "stale",
    }
}

/// The screen render chosen when no `crop` is given.
pub const DEFAULT_SCREEN_CROP: &str = "large";
