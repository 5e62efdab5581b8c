//! What every binary does the same way: logs and the stop signal.

use crate::config::LogFormat;
use std::io::IsTerminal;
use tracing_subscriber::EnvFilter;

/// Logs to stderr, filtered by `LIGHTBOX_LOG` (default `info`).
pub fn init_logs(format: LogFormat) {
    let filter = EnvFilter::try_from_env("LIGHTBOX_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Json => logs.json().init(),
        LogFormat::Text => logs.init(),
    }
}

/// The WebP encoder is built with SSE4.1 (its own SSE4.1 code paths, about
/// 2 % of a render's CPU): every x86-64 CPU since 2008-2011 has it (the x86-64-v2
/// level). A CPU without it is refused at start with this message, not
/// killed by an illegal instruction at the first render.
pub fn check_cpu() -> Result<(), String> {
    #[cfg(target_arch = "x86_64")]
    if !std::arch::is_x86_feature_detected!("sse4.1") {
        return Err(
            "this CPU lacks SSE4.1, which Lightbox's WebP encoder is built for \
                    (x86-64-v2: every x86-64 CPU since 2008-2011)"
                .into(),
        );
    }
    Ok(())
}

/// Resolves at SIGTERM or Ctrl-C.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
    tracing::info!("shutting down");
}

/// Keeps the embedded data private to the service's user: from here on the
/// process creates files 0600 and folders 0700 (umask 077), the data folder
/// itself is 0700 (so nothing made earlier with looser bits is reachable
/// through it), and the SQLite files already there are made 0600.
pub fn make_data_private(dir: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    crate::sys::set_umask(0o077);
    std::fs::create_dir_all(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let is_db = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.contains(".db"));
        if is_db && path.is_file() {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
        }
    }
    Ok(())
}

/// The settings every binary reads, for `--help`; docs/configuration.md
/// lists them all.
const ENVIRONMENT: &str = "\
Configured by environment variables, among them:
  LIGHTBOX_LISTEN           listen address (default 127.0.0.1:8080)
  LIGHTBOX_DATA_DIR         embedded mode's data directory (default ./data)
  DATABASE_URL              sqlite://... (default, in the data directory) or postgres://...
  LIGHTBOX_STORAGE_URL      file:///path (default, in the data directory) or s3://bucket
  NATS_URL                  unset: in-process queue; set: NATS JetStream (cluster mode)
  LIGHTBOX_METRICS_LISTEN   /metrics listener (default 127.0.0.1:9090)
  LIGHTBOX_CONFIG           TOML file: presets, alias limit, render quota
  LIGHTBOX_LOG              log filter (default info)
Every setting: docs/configuration.md.";

/// A binary's command line, read before anything starts: `--help` and
/// `--version` print and exit 0, an unknown argument exits 2 with usage.
pub fn command_line(cmd: clap::Command) -> clap::ArgMatches {
    cmd.version(env!("CARGO_PKG_VERSION"))
        .after_help(ENVIRONMENT)
        .get_matches()
}
