//! `lightbox-controller`: reconciles Lightbox's custom resources.
//! `lightbox-controller crds` prints the CustomResourceDefinitions;
//! `lightbox-controller uninstall` is the chart's pre-delete hook and
//! `lightbox-controller check URL...` its `helm test`.

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
        Some("check") => {
            let urls: Vec<String> = std::env::args().skip(2).collect();
            lightbox_controller::check::run(&urls).await
        }
        Some("uninstall") => {
            init_logs(lightbox_core::config::LogFormat::Text);
            lightbox_controller::uninstall().await
        }
        None | Some("run") => {
            let config = Config::from_env()?;
            init_logs(config.log_format);
            lightbox_controller::run(config).await
        }
        Some(other) => {
            anyhow::bail!("unknown command {other}: use `crds`, `run`, `check` or `uninstall`")
        }
    }
}
