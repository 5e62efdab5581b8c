//! `lightbox-controller`: reconciles Lightbox's custom resources.
//! `lightbox-controller crds` prints the CustomResourceDefinitions;
//! `lightbox-controller uninstall` is the chart's pre-delete hook and
//! `lightbox-controller check URL...` its `helm test`.

use lightbox_core::config::Config;
use lightbox_core::runtime::init_logs;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    use clap::{Arg, ArgAction, Command};
    let matches = lightbox_core::runtime::command_line(
        Command::new("lightbox-controller")
            .about("Reconciles Lightbox's custom resources (CropPreset, AliasPolicy, RenderQuota).")
            .subcommand(Command::new("run").about("Reconcile (the default)"))
            .subcommand(Command::new("crds").about("Print the CustomResourceDefinitions"))
            .subcommand(
                Command::new("check")
                    .about("The chart's helm test: each URL must answer 200")
                    .arg(Arg::new("url").action(ArgAction::Append)),
            )
            .subcommand(Command::new("uninstall").about(
                "The chart's pre-delete hook: release the finalizers of this release's resources",
            )),
    );
    match matches.subcommand_name() {
        Some("crds") => {
            for (_, yaml) in lightbox_controller::resources::crds_yaml() {
                print!("---\n{yaml}");
            }
            Ok(())
        }
        Some("check") => {
            let urls: Vec<String> = matches
                .subcommand_matches("check")
                .and_then(|m| m.get_many::<String>("url"))
                .map(|u| u.cloned().collect())
                .unwrap_or_default();
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
        Some(other) => anyhow::bail!("unknown command {other}"),
    }
}
