//! NATS JetStream between the API and `lightbox-worker`: a work-queue
//! stream `{PREFIX}_renders` on subject `{prefix}.renders`, one durable pull
//! consumer shared by every worker, explicit acks, in-progress acks during
//! long renders and bounded redelivery. The client reconnects by itself;
//! the stream and consumer are (re)declared on first use, so the API and the
//! workers may start before NATS does.

use super::{Delivery, JobQueue, RenderJob, Settle, Slots};
use crate::{Error, Result};
use async_nats::jetstream::{self, consumer::pull, message::Acker, stream, AckKind};
use async_trait::async_trait;
use futures::stream::BoxStream;
use futures::StreamExt;
use serde::Deserialize;
use std::time::Duration;
use tokio::sync::OnceCell;

#[derive(Debug, Clone)]
pub struct NatsSettings {
    pub url: String,
    pub prefix: String,
    /// How long a delivery may go unanswered before it is handed to another
    /// worker; workers send in-progress acks at a third of it.
    pub ack_wait: Duration,
    pub max_deliver: u32,
}

impl NatsSettings {
    /// From the configuration; `None` without `NATS_URL` (embedded mode).
    pub fn from_config(config: &crate::config::Config) -> Option<NatsSettings> {
        Some(NatsSettings {
            url: config.nats_url.clone()?,
            prefix: config.nats_prefix.clone(),
            ack_wait: Duration::from_secs(config.nats_ack_wait_s),
            max_deliver: config.nats_max_deliver,
        })
    }
}

pub struct NatsQueue {
    client: async_nats::Client,
    js: jetstream::Context,
    settings: NatsSettings,
    stream: OnceCell<stream::Stream>,
    consumer: OnceCell<jetstream::consumer::PullConsumer>,
}

fn nats_err(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Internal(anyhow::anyhow!("NATS {what}: {e}"))
}

impl NatsQueue {
    /// Word of settled photos over this connection, under this
    /// installation's prefix.
    pub fn news(&self) -> super::news::NatsNews {
        super::news::NatsNews::new(self.client.clone(), &self.settings.prefix)
    }

    /// Returns at once; the connection is made (and remade) in the background.
    pub async fn connect(settings: NatsSettings) -> anyhow::Result<NatsQueue> {
        anyhow::ensure!(
            !settings.prefix.is_empty()
                && settings
                    .prefix
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
            "LIGHTBOX_NATS_PREFIX may hold only letters, digits, - and _"
        );
        let client = async_nats::ConnectOptions::new()
            .name("lightbox")
            .retry_on_initial_connect()
            .connection_timeout(Duration::from_secs(2))
            .connect(settings.url.as_str())
            .await?;
        let mut js = jetstream::new(client.clone());
        js.set_timeout(Duration::from_secs(5));
        Ok(NatsQueue {
            client,
            js,
            settings,
            stream: OnceCell::new(),
            consumer: OnceCell::new(),
        })
    }

    fn stream_name(&self) -> String {
        format!("{}_renders", self.settings.prefix)
    }

    fn subject(&self) -> String {
        format!("{}.renders", self.settings.prefix)
    }

    fn consumer_name(&self) -> String {
        format!("{}_render_workers", self.settings.prefix)
    }

    async fn stream(&self) -> Result<&stream::Stream> {
        self.stream
            .get_or_try_init(|| async {
                self.js
                    .get_or_create_stream(stream::Config {
                        name: self.stream_name(),
                        subjects: vec![self.subject()],
                        retention: stream::RetentionPolicy::WorkQueue,
                        storage: stream::StorageType::File,
                        duplicate_window: Duration::from_secs(120),
                        ..Default::default()
                    })
                    .await
                    .map_err(|e| nats_err("stream", e))
            })
            .await
    }

    async fn consumer(&self) -> Result<&jetstream::consumer::PullConsumer> {
        let stream = self.stream().await?;
        self.consumer
            .get_or_try_init(|| async {
                stream
                    .get_or_create_consumer(
                        &self.consumer_name(),
                        pull::Config {
                            durable_name: Some(self.consumer_name()),
                            ack_policy: jetstream::consumer::AckPolicy::Explicit,
                            ack_wait: self.settings.ack_wait,
                            max_deliver: i64::from(self.settings.max_deliver),
                            filter_subject: self.subject(),
                            ..Default::default()
                        },
                    )
                    .await
                    .map_err(|e| nats_err("consumer", e))
            })
            .await
    }

    async fn consumer_info(&self) -> Result<jetstream::consumer::Info> {
        self.consumer()
            .await?
            .get_info()
            .await
            .map_err(|e| nats_err("consumer info", e))
    }

    fn connected(&self) -> bool {
        self.client.connection_state() == async_nats::connection::State::Connected
    }

    /// Jobs whose every delivery went unanswered (a worker died on each):
    /// JetStream's max-deliveries advisory names the message, which is read,
    /// removed from the stream and returned, so the worker can mark it
    /// failed. A queue group makes one worker handle each.
    pub async fn exhausted_jobs(&self) -> Result<BoxStream<'static, (RenderJob, Option<String>)>> {
        let subject = format!(
            "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.{}.{}",
            self.stream_name(),
            self.consumer_name()
        );
        let group = format!("{}_exhausted", self.settings.prefix);
        let advisories = self
            .client
            .queue_subscribe(subject, group)
            .await
            .map_err(|e| nats_err("subscribe", e))?;
        let stream = self.stream().await?.clone();
        Ok(advisories
            .filter_map(move |msg| {
                let stream = stream.clone();
                async move {
                    #[derive(Deserialize)]
                    struct Advisory {
                        stream_seq: u64,
                    }
                    let seq = serde_json::from_slice::<Advisory>(&msg.payload)
                        .ok()?
                        .stream_seq;
                    let raw = stream.get_raw_message(seq).await.ok()?;
                    let job = serde_json::from_slice::<RenderJob>(&raw.payload).ok()?;
                    let ticket = ticket_of(raw.headers.get(MSG_ID));
                    let _ = stream.delete_message(seq).await;
                    Some((job, ticket))
                }
            })
            .boxed())
    }
}

/// The header JetStream deduplicates by: the outbox row's ticket.
const MSG_ID: &str = "Nats-Msg-Id";

fn ticket_of(value: Option<&async_nats::HeaderValue>) -> Option<String> {
    value
        .map(|v| v.as_str().to_owned())
        .filter(|t| !t.is_empty())
}

struct NatsSettle(Acker);

#[async_trait]
impl Settle for NatsSettle {
    async fn ack(&self) -> Result<()> {
        self.0
            .ack_with(AckKind::Ack)
            .await
            .map_err(|e| nats_err("ack", e))
    }

    async fn retry(&self, delay: Duration) -> Result<()> {
        self.0
            .ack_with(AckKind::Nak(Some(delay)))
            .await
            .map_err(|e| nats_err("nak", e))
    }

    async fn in_progress(&self) -> Result<()> {
        self.0
            .ack_with(AckKind::Progress)
            .await
            .map_err(|e| nats_err("progress", e))
    }
}

#[async_trait]
impl JobQueue for NatsQueue {
    async fn publish(&self, job: RenderJob, dedup_id: &str) -> Result<()> {
        if !self.connected() {
            return Err(nats_err("publish", "not connected"));
        }
        self.stream().await?;
        let payload = serde_json::to_vec(&job).map_err(anyhow::Error::from)?;
        let ack = self
            .js
            .send_publish(
                self.subject(),
                jetstream::message::PublishMessage::build()
                    .payload(payload.into())
                    .message_id(dedup_id),
            )
            .await
            .map_err(|e| nats_err("publish", e))?;
        ack.await.map_err(|e| nats_err("publish ack", e))?;
        Ok(())
    }

    async fn next(&self) -> Result<Option<Delivery>> {
        if !self.connected() {
            tokio::time::sleep(Duration::from_millis(500)).await;
            return Ok(None);
        }
        let consumer = self.consumer().await?;
        let mut batch = consumer
            .batch()
            .max_messages(1)
            .expires(Duration::from_secs(5))
            .messages()
            .await
            .map_err(|e| nats_err("fetch", e))?;
        let Some(msg) = batch.next().await else {
            return Ok(None);
        };
        let msg = msg.map_err(|e| nats_err("fetch", e))?;
        let attempt = msg.info().map_or(1, |i| i.delivered.max(1) as u32);
        let ticket = ticket_of(msg.headers.as_ref().and_then(|h| h.get(MSG_ID)));
        let (msg, acker) = msg.split();
        let settle = Box::new(NatsSettle(acker));
        let job = match serde_json::from_slice::<RenderJob>(&msg.payload) {
            Ok(job) => job,
            Err(e) => {
                // Not ours to retry: nothing can make it parse.
                tracing::warn!(error = %e, "dropping an unreadable render message");
                let _ = settle.0.ack_with(AckKind::Term).await;
                return Ok(None);
            }
        };
        Ok(Some(Delivery {
            job,
            ticket,
            attempt,
            max_attempts: self.settings.max_deliver,
            settle,
        }))
    }

    async fn depth(&self) -> Result<u64> {
        let info = self.consumer_info().await?;
        Ok(info.num_pending + info.num_ack_pending as u64)
    }

    /// Idle workers are those with a pull request waiting; busy ones hold
    /// a delivery not yet acknowledged (or one handed back to wait out its
    /// delay, which then counts as a slot: the relay waits a little more).
    async fn slots(&self) -> Result<Slots> {
        let info = self.consumer_info().await?;
        Ok(Slots {
            idle: info.num_waiting as u64,
            busy: info.num_ack_pending as u64,
            queued: info.num_pending,
        })
    }

    async fn check(&self) -> Result<()> {
        if !self.connected() {
            return Err(nats_err("connection", "not connected"));
        }
        self.consumer().await.map(|_| ())
    }

    fn progress_interval(&self) -> Duration {
        (self.settings.ack_wait / 3).max(Duration::from_millis(500))
    }

    /// JetStream keeps what it acknowledged.
    fn dies_with_process(&self) -> bool {
        false
    }

    async fn exhausted(&self) -> Result<BoxStream<'static, (RenderJob, Option<String>)>> {
        self.exhausted_jobs().await
    }
}
