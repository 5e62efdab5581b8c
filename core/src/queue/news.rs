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

    /// Subscribes now rather than at the first `listen`, so the first
    /// waiter does not miss news sent while the subscription was made. For
    /// API processes; workers only tell.
    pub fn listening(self) -> NatsNews {
        self.subscribed.call_once(|| self.subscribe());
        self
    }

    /// Passes what NATS brings on to this process's listeners.
    fn subscribe(&self) {
        let (client, subject, heard) = (
            self.client.clone(),
            self.subject.clone(),
            self.heard.clone(),
        );
        tokio::spawn(async move {
            loop {
                match client.subscribe(subject.clone()).await {
                    // The client subscribes again after a reconnect itself.
                    Ok(mut messages) => {
                        while let Some(m) = messages.next().await {
                            let id = std::str::from_utf8(&m.payload)
                                .ok()
                                .and_then(|s| Uuid::parse_str(s).ok());
                            if let Some(id) = id {
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
        self.subscribed.call_once(|| self.subscribe());
        self.heard.listen()
    }
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
