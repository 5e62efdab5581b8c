use lightbox_core::config::Config;
use lightbox_core::runtime::init_logs;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let config = Config::from_env()?;
    init_logs(config.log_format);
    lightbox_api::serve(config).await
}
