use lightbox_core::config::Config;
use lightbox_core::runtime::init_logs;

fn main() -> anyhow::Result<()> {
    lightbox_core::runtime::check_cpu().map_err(anyhow::Error::msg)?;
    lightbox_core::limits::heap::keep_freed_pages();
    tokio::runtime::Runtime::new()?.block_on(run())
}

async fn run() -> anyhow::Result<()> {
    let matches = lightbox_core::runtime::command_line(
        clap::Command::new("lightbox-api")
            .about(
                "Lightbox's API server: JSON-RPC 2.0 and the plain HTTP routes. \
                 Embedded mode (the default) is the whole service in this one process.",
            )
            .arg(
                clap::Arg::new("listen")
                    .long("listen")
                    .value_name("ADDR")
                    .global(true)
                    .help("Listen address (wins over LIGHTBOX_LISTEN)"),
            )
            .arg(
                clap::Arg::new("data-dir")
                    .long("data-dir")
                    .value_name("DIR")
                    .global(true)
                    .help("Embedded mode's data directory (wins over LIGHTBOX_DATA_DIR)"),
            )
            .subcommand(clap::Command::new("serve").about("Serve (the default)"))
            .subcommand(clap::Command::new("migrate").about(
                "Apply the database migrations and exit (the chart runs it before an install or upgrade)",
            ))
            .subcommand(clap::Command::new("openrpc").about(
                "Print the OpenRPC document of the API (what rpc.discover answers) and exit",
            )),
    );
    if matches.subcommand_name() == Some("openrpc") {
        let base =
            std::env::var("LIGHTBOX_BASE_URL").unwrap_or_else(|_| "http://127.0.0.1:8080".into());
        let url = lightbox_core::domain::urls::absolute(&base, "/rpc");
        let doc = lightbox_api::rpc::discover::document(&url);
        println!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(());
    }
    let flags = [
        ("LIGHTBOX_LISTEN", "listen"),
        ("LIGHTBOX_DATA_DIR", "data-dir"),
    ]
    .map(|(var, flag)| (var, matches.get_one::<String>(flag).cloned()));
    let config = Config::load(|key| {
        let flag = flags.iter().find(|(var, _)| *var == key);
        flag.and_then(|(_, value)| value.clone())
            .or_else(|| std::env::var(key).ok().filter(|v| !v.is_empty()))
    })?;
    init_logs(config.log_format);
    if matches.subcommand_name() == Some("migrate") {
        return lightbox_api::migrate(&config).await;
    }
    lightbox_api::serve(config).await
}
