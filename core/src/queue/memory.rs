//! The in-process queue of embedded mode.

use super::{JobQueue, RenderJob};
use crate::Result;
use async_trait::async_trait;
use tokio::sync::{mpsc, Mutex};

pub struct MemoryQueue {
    tx: mpsc::UnboundedSender<RenderJob>,
    rx: Mutex<mpsc::UnboundedReceiver<RenderJob>>,
}

impl MemoryQueue {
    pub fn new() -> MemoryQueue {
        let (tx, rx) = mpsc::unbounded_channel();
        MemoryQueue {
            tx,
            rx: Mutex::new(rx),
        }
    }
}

impl Default for MemoryQueue {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait]
impl JobQueue for MemoryQueue {
    async fn publish(&self, job: RenderJob) -> Result<()> {
        self.tx
            .send(job)
            .map_err(|_| anyhow::anyhow!("render queue closed"))?;
        Ok(())
    }

    async fn next(&self) -> Option<RenderJob> {
        self.rx.lock().await.recv().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn jobs_come_out_in_order() {
        let q = MemoryQueue::new();
        let (a, b) = (uuid::Uuid::new_v4(), uuid::Uuid::new_v4());
        q.publish(RenderJob { image_id: a }).await.unwrap();
        q.publish(RenderJob { image_id: b }).await.unwrap();
        assert_eq!(q.next().await.unwrap().image_id, a);
        assert_eq!(q.next().await.unwrap().image_id, b);
    }
}
