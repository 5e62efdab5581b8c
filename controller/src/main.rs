//! `lightbox-controller`: reconciles Lightbox's custom resources.
//! `lightbox-controller crds` prints the CustomResourceDefinitions.

use lightbox_core::config::Config;
use lightbox_core::runtime::init_logs;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    match std::env::args().nth(1).as_deref() {
        Some("crds") => {
            for (_, yaml) in lightbox_controller::resources::crds_yaml() {
                print!("---\n{yaml}");
            }
            Ok(())
        }
        None | Some("run") => {
            let config = Config::from_env()?;
            init_logs(config.log_format);
            lightbox_controller::run(config).await
        }
        Some(other) => anyhow::bail!("unknown command {other}: use `crds` or `run`"),
    }
}
