//! `lightbox-controller check URL...`: the chart's `helm test`. The image is
//! distroless (no curl), so a plain HTTP/1.0 GET is made here; each URL
//! must answer 200 within five seconds.

use anyhow::{bail, Context};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The status code `http://host:port/path` answers.
pub async fn status(url: &str) -> anyhow::Result<u16> {
    let rest = url
        .strip_prefix("http://")
        .with_context(|| format!("{url}: only http:// is checked"))?;
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let path = if path.is_empty() { "/" } else { path };
    let address = if host.contains(':') {
        host.to_owned()
    } else {
        format!("{host}:80")
    };
    let exchange = async {
        let mut tcp = tokio::net::TcpStream::connect(&address).await?;
        let request = format!("GET {path} HTTP/1.0\r\nHost: {host}\r\n\r\n");
        tcp.write_all(request.as_bytes()).await?;
        let mut head = vec![0; 64];
        let n = tcp.read(&mut head).await?;
        anyhow::Ok(String::from_utf8_lossy(&head[..n]).into_owned())
    };
    let head = tokio::time::timeout(Duration::from_secs(5), exchange)
        .await
        .with_context(|| format!("{url}: no answer in 5 s"))??;
    head.split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .with_context(|| format!("{url}: not an HTTP answer: {head:?}"))
}

pub async fn run(urls: &[String]) -> anyhow::Result<()> {
    for url in urls {
        match status(url).await? {
            200 => println!("{url}: 200"),
            code => bail!("{url}: {code}"),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn reads_the_status_of_a_real_server() {
        let app = axum::Router::new().route("/ok", axum::routing::get(|| async { "ok" }));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        assert_eq!(status(&format!("http://{addr}/ok")).await.unwrap(), 200);
        assert_eq!(status(&format!("http://{addr}/no")).await.unwrap(), 404);
        assert!(run(&[format!("http://{addr}/no")]).await.is_err());
    }
}
