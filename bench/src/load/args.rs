//! Command-line flags, each `--name value`.

pub struct Args {
    pub url: String,
    pub email: String,
    pub password: String,
    pub seconds: u64,
    pub connections: usize,
    pub uploads_per_s: f64,
    pub pids: Vec<u32>,
    pub out: Option<String>,
}

impl Args {
    pub fn parse() -> Args {
        let mut a = Args {
            url: String::new(),
            email: String::new(),
            password: String::new(),
            seconds: 30,
            connections: 8,
            uploads_per_s: 1.0,
            pids: Vec::new(),
            out: None,
        };
        let mut it = std::env::args().skip(1);
        while let Some(flag) = it.next() {
            let value = it
                .next()
                .unwrap_or_else(|| usage(&format!("{flag} needs a value")));
            let num = |v: &str| {
                v.parse::<f64>()
                    .unwrap_or_else(|_| usage(&format!("{flag}: not a number")))
            };
            match flag.as_str() {
                "--url" => a.url = value.trim_end_matches('/').to_owned(),
                "--email" => a.email = value,
                "--password" => a.password = value,
                "--seconds" => a.seconds = num(&value) as u64,
                "--connections" => a.connections = num(&value) as usize,
                "--uploads-per-s" => a.uploads_per_s = num(&value),
                "--pid" => a.pids.push(num(&value) as u32),
                "--out" => a.out = Some(value),
                other => usage(&format!("unknown flag {other}")),
            }
        }
        if a.url.is_empty() || a.email.is_empty() || a.password.is_empty() {
            usage("--url, --email and --password are required");
        }
        a
    }
}

fn usage(why: &str) -> ! {
    eprintln!("load: {why}\nusage: load --url URL --email E --password P [--seconds 30] [--connections 8] [--uploads-per-s 1] [--pid N]... [--out FILE]");
    std::process::exit(2)
}
