//! News that a photo has settled (left `processing` for `ready` or
//! `failed`, or was deleted), from whichever process rendered it to the API processes that
//! hold an `image.get` for it (`Prefer: wait`). Only a wake-up call: a
//! waiter reads the status from the database when told and at its
//! deadline, so news lost with a dropped connection costs it time, never a
//! wrong answer.

use async_trait::async_trait;
use futures::StreamExt;
use std::sync::Once;
use std::time::Duration;
use tokio::sync::broadcast;
use uuid::Uuid;

/// The pause before subscribing again when NATS refused.
const RESUBSCRIBE: Duration = Duration::from_secs(1);
/// News a slow listener may fall behind by before it reads again anyway.
const BACKLOG: usize = 1024;
/// How long telling may take before the renderer goes on without it.
const SEND_WITHIN: Duration = Duration::from_millis(500);
/// How long an API process's start waits for NATS to confirm its
/// subscription before it serves anyway (NATS may be down; the client
/// subscribes again when it is back).
const SUBSCRIBE_WITHIN: Duration = Duration::from_secs(1);

#[async_trait]
pub trait News: Send + Sync {
    /// Tells every listener that `image` settled. Never fails its caller.
    async fn settled(&self, image: Uuid);
    /// Photos that settle from now on.
    fn listen(&self) -> broadcast::Receiver<Uuid>;
}

/// One process (embedded mode): the renderer tells the waiters directly.
#[derive(Clone)]
pub struct LocalNews(broadcast::Sender<Uuid>);

impl Default for LocalNews {
    fn default() -> LocalNews {
        LocalNews(broadcast::channel(BACKLOG).0)
    }
}

#[async_trait]
impl News for LocalNews {
    async fn settled(&self, image: Uuid) {
        // No receiver is no one waiting, not an error.
        let _ = self.0.send(image);
    }

    fn listen(&self) -> broadcast::Receiver<Uuid> {
        self.0.subscribe()
    }
}

/// Cluster mode: plain NATS (not the JetStream stream: news no one waits
/// for is dropped) on `{prefix}.settled`, the photo's id as the payload.
pub struct NatsNews {
    client: async_nats::Client,
    subject: String,
    heard: LocalNews,
    subscribed: Once,
}

impl NatsNews {
    pub fn new(client: async_nats::Client, prefix: &str) -> NatsNews {
        NatsNews {
            client,
            subject: format!("{prefix}.settled"),
            heard: LocalNews::default(),
            subscribed: Once::new(),
        }
    }

    /// Subscribes before the process serves, and waits (at most
    /// `SUBSCRIBE_WITHIN`) until its subscription has heard a probe of its
    /// own: news published before the server has seen a subscription does
    /// not reach it, and a waiter that missed it would be held to its
    /// deadline. (A flush only writes the SUB; a probe that comes back
    /// proves the server holds it.) For API processes; workers only tell.
    pub async fn listening(self) -> NatsNews {
        let first = match tokio::time::timeout(SUBSCRIBE_WITHIN, self.confirmed()).await {
            Ok(Ok(messages)) => Some(messages),
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "cannot subscribe to settle news yet");
                None
            }
            Err(_) => {
                tracing::warn!("NATS has not confirmed the settle news subscription yet");
                None
            }
        };
        self.subscribed.call_once(|| self.forward(first));
        self
    }

    /// A subscription that has heard its own probe. Other processes read
    /// the probe as no photo's id and drop it.
    async fn confirmed(&self) -> anyhow::Result<async_nats::Subscriber> {
        let mut messages = self.client.subscribe(self.subject.clone()).await?;
        let probe = format!("probe {}", Uuid::new_v4());
        self.client
            .publish(self.subject.clone(), probe.clone().into())
            .await?;
        while let Some(m) = messages.next().await {
            if m.payload == probe.as_bytes() {
                return Ok(messages);
            }
            if let Some(id) = photo(&m) {
                self.heard.settled(id).await;
            }
        }
        anyhow::bail!("the subscription ended")
    }

    /// Passes what NATS brings on to this process's listeners, on `first`
    /// if there is one, and on a subscription of its own after that.
    fn forward(&self, first: Option<async_nats::Subscriber>) {
        let (client, subject, heard) = (
            self.client.clone(),
            self.subject.clone(),
            self.heard.clone(),
        );
        tokio::spawn(async move {
            let mut next = first;
            loop {
                let subscribed = match next.take() {
                    Some(messages) => Ok(messages),
                    None => client.subscribe(subject.clone()).await,
                };
                match subscribed {
                    // The client subscribes again after a reconnect itself.
                    Ok(mut messages) => {
                        while let Some(m) = messages.next().await {
                            if let Some(id) = photo(&m) {
                                heard.settled(id).await;
                            }
                        }
                    }
                    Err(e) => tracing::warn!(error = %e, "cannot subscribe to settle news"),
                }
                tokio::time::sleep(RESUBSCRIBE).await;
            }
        });
    }
}

#[async_trait]
impl News for NatsNews {
    async fn settled(&self, image: Uuid) {
        let send = self
            .client
            .publish(self.subject.clone(), image.to_string().into());
        match tokio::time::timeout(SEND_WITHIN, send).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::debug!(error = %e, %image, "settle news not sent"),
            Err(_) => tracing::debug!(%image, "settle news not sent in time"),
        }
    }

    fn listen(&self) -> broadcast::Receiver<Uuid> {
        self.subscribed.call_once(|| self.forward(None));
        self.heard.listen()
    }
}

/// The photo a message names; `None` for a probe or garbage.
fn photo(m: &async_nats::Message) -> Option<Uuid> {
    std::str::from_utf8(&m.payload)
        .ok()
        .and_then(|s| Uuid::parse_str(s).ok())
}

/// Resolves when `news` names `image`, or may have (it fell behind).
pub async fn heard(news: &mut broadcast::Receiver<Uuid>, image: Uuid) {
    loop {
        match news.recv().await {
            Ok(id) if id == image => return,
            Ok(_) => {}
            Err(broadcast::error::RecvError::Lagged(_)) => return,
            Err(broadcast::error::RecvError::Closed) => std::future::pending().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_listener_hears_its_photo_and_not_others() {
        let news = LocalNews::default();
        let (mine, other) = (Uuid::new_v4(), Uuid::new_v4());
        let mut rx = news.listen();
        news.settled(other).await;
        let waiting = heard(&mut rx, mine);
        tokio::pin!(waiting);
        assert!(futures::poll!(waiting.as_mut()).is_pending());
        news.settled(mine).await;
        tokio::time::timeout(Duration::from_secs(5), waiting)
            .await
            .expect("heard");
    }

    /// NATS on loopback, as the test suite requires (the cluster tests
    /// need it too).
    async fn nats() -> async_nats::Client {
        async_nats::connect("127.0.0.1:4222")
            .await
            .expect("NATS for the news test")
    }

    #[tokio::test]
    async fn news_sent_the_moment_an_api_process_has_started_is_heard() {
        let teller = nats().await;
        // Each round is a fresh process's first moment; a subscription the
        // server had not seen yet would lose its news in some of them.
        for round in 0..30 {
            let prefix = format!("newstest{}", Uuid::new_v4().simple());
            let news = NatsNews::new(nats().await, &prefix).listening().await;
            let mut rx = news.listen();
            let id = Uuid::new_v4();
            NatsNews::new(teller.clone(), &prefix).settled(id).await;
            tokio::time::timeout(Duration::from_secs(5), heard(&mut rx, id))
                .await
                .unwrap_or_else(|_| panic!("round {round}: news sent at start was lost"));
        }
    }

    #[tokio::test]
    async fn a_listener_that_fell_behind_reads_again() {
        let news = LocalNews::default();
        let mut rx = news.listen();
        for _ in 0..BACKLOG + 1 {
            news.settled(Uuid::new_v4()).await;
        }
        tokio::time::timeout(Duration::from_secs(5), heard(&mut rx, Uuid::new_v4()))
            .await
            .expect("lagged is heard");
    }
}
