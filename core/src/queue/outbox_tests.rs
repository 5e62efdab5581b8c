//! The relay and the in-process queue against a real database: work sent
//! to that queue stays in the outbox until its job is acknowledged, a
//! request renewed meanwhile outlives the older job's ack, and the relay
//! of the next process hands out again what the last one had sent.

use super::Relay;
use crate::db::testing::{drop_database, outbox_rows as rows, owner_with_album, photo, repo};
use crate::db::{DynRepo, ImageRepo, OutboxRepo, SqlRepo};
use crate::queue::{Delivery, JobQueue, MemoryQueue, RenderJob};
use std::sync::Arc;
use std::time::Duration;

fn embedded(repo: &SqlRepo) -> (Arc<MemoryQueue>, Relay) {
    let repo: DynRepo = Arc::new(repo.clone());
    let queue = Arc::new(MemoryQueue::with_outbox(repo.clone()));
    (queue.clone(), Relay::new(repo, queue))
}

#[tokio::test]
async fn in_process_work_stays_in_the_outbox_until_its_job_is_done() {
    let repo = repo().await;
    let (owner, album) = owner_with_album(&repo).await;
    let (a, b) = (photo(1, owner, album.id), photo(2, owner, album.id));
    for p in [&a, &b] {
        repo.insert_image(p, &[]).await.unwrap();
    }
    let (queue, relay) = embedded(&repo);
    assert_eq!(relay.drain().await.unwrap(), 2);
    assert_eq!(repo.outbox_len().await.unwrap(), 0, "nothing left to send");
    assert_eq!(rows(&repo).await, 2, "both kept while their jobs wait");
    assert_eq!(relay.drain().await.unwrap(), 0, "a sent row goes out once");

    let (first, second) = (queue.next().await.unwrap(), queue.next().await.unwrap());
    let (first, second) = (first.unwrap(), second.unwrap());
    let (of_a, of_b) = if first.job.image_id == a.id {
        (first, second)
    } else {
        (second, first)
    };
    assert_eq!(of_b.job.image_id, b.id);
    // b is asked for again while its job runs: that job may have read b
    // before the change, so the renewed request outlives its ack.
    repo.outbox_add(&[b.id], 5).await.unwrap();
    of_b.settle.ack().await.unwrap();
    of_a.settle.ack().await.unwrap();
    assert_eq!(rows(&repo).await, 1, "a's row goes with its job, b's stays");
    assert_eq!(repo.outbox_len().await.unwrap(), 1, "b's waits to be sent");
    assert_eq!(relay.drain().await.unwrap(), 1);
    assert_eq!(repo.outbox_len().await.unwrap(), 0);

    // The process dies with b's job in its queue; the next one's relay
    // sends it again, and its ack ends it.
    drop((queue, relay));
    let (queue, relay) = embedded(&repo);
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let running = tokio::spawn(relay.run(stopped));
    let again = tokio::time::timeout(Duration::from_secs(10), queue.next()).await;
    let again = again.expect("b sent again").unwrap().unwrap();
    assert_eq!(again.job.image_id, b.id);
    again.settle.ack().await.unwrap();
    assert_eq!(rows(&repo).await, 0);
    assert_eq!(queue.depth().await.unwrap(), 0);
    stop.send(true).unwrap();
    running.await.unwrap();
    drop_database(repo).await;
}

/// A queue that keeps what it is sent (as JetStream does) and leaves the
/// outbox to the relay.
#[derive(Default)]
struct Keeping(std::sync::Mutex<Vec<uuid::Uuid>>);

#[async_trait::async_trait]
impl JobQueue for Keeping {
    async fn publish(&self, job: RenderJob, _dedup_id: &str) -> crate::Result<()> {
        self.0.lock().unwrap().push(job.image_id);
        Ok(())
    }
    async fn next(&self) -> crate::Result<Option<Delivery>> {
        Ok(None)
    }
    async fn depth(&self) -> crate::Result<u64> {
        Ok(self.0.lock().unwrap().len() as u64)
    }
    async fn check(&self) -> crate::Result<()> {
        Ok(())
    }
    fn progress_interval(&self) -> Duration {
        Duration::from_secs(1)
    }
    fn removes_done_rows(&self) -> bool {
        false
    }
}

#[tokio::test]
async fn a_queue_that_keeps_work_takes_each_row_off_the_outbox() {
    let repo = repo().await;
    let (owner, album) = owner_with_album(&repo).await;
    let (a, b) = (photo(1, owner, album.id), photo(2, owner, album.id));
    repo.insert_image(&a, &[]).await.unwrap();
    // b was sent to an embedded process's queue, which died with it.
    let (_, embedded_relay) = embedded(&repo);
    embedded_relay.drain().await.unwrap();
    repo.insert_image(&b, &[]).await.unwrap();
    let dyn_repo: DynRepo = Arc::new(repo.clone());
    let queue = Arc::new(Keeping::default());
    let relay = Relay::new(dyn_repo, queue.clone());
    assert_eq!(relay.drain().await.unwrap(), 1, "b alone waits");
    assert_eq!(rows(&repo).await, 1, "b gone once sent, a still marked");

    let (stop, stopped) = tokio::sync::watch::channel(false);
    let running = tokio::spawn(relay.run(stopped));
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while rows(&repo).await > 0 {
        assert!(std::time::Instant::now() < deadline, "a never sent again");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    stop.send(true).unwrap();
    running.await.unwrap();
    let mut sent = queue.0.lock().unwrap().clone();
    sent.sort();
    let mut want = vec![a.id, b.id];
    want.sort();
    assert_eq!(sent, want, "each sent once");
    drop_database(repo).await;
}

#[tokio::test]
async fn a_job_that_takes_its_process_down_is_given_up_after_five_starts() {
    use crate::queue::memory::MAX_ATTEMPTS;
    use futures::StreamExt;
    let repo = repo().await;
    let (owner, album) = owner_with_album(&repo).await;
    let a = photo(1, owner, album.id);
    repo.insert_image(&a, &[]).await.unwrap();
    for start in 1..=MAX_ATTEMPTS {
        // A start: what the last process sent waits again, and the photo,
        // still `processing`, is recorded again, its count kept.
        repo.outbox_resend().await.unwrap();
        repo.outbox_recorded_again(&[a.id], 9).await.unwrap();
        let (queue, relay) = embedded(&repo);
        assert_eq!(relay.drain().await.unwrap(), 1);
        let d = queue.next().await.unwrap().unwrap();
        assert_eq!((d.job.image_id, d.attempt), (a.id, start));
        assert_eq!(d.is_last(), start == MAX_ATTEMPTS);
        // The job takes the process down: nothing answers it.
        drop((d, queue, relay));
    }
    repo.outbox_resend().await.unwrap();
    let (queue, relay) = embedded(&repo);
    let mut given_up = queue.exhausted().await.unwrap();
    assert_eq!(relay.drain().await.unwrap(), 1);
    let waiting = {
        let queue = queue.clone();
        tokio::spawn(async move { queue.next().await.map(|d| d.map(|d| d.attempt)) })
    };
    let job = tokio::time::timeout(Duration::from_secs(10), given_up.next()).await;
    assert_eq!(job.expect("given up").map(|j| j.image_id), Some(a.id));
    assert_eq!(
        rows(&repo).await,
        0,
        "its row is gone, so no start sends it"
    );
    assert_eq!(queue.depth().await.unwrap(), 0);

    // Asked for again (an owner's change), it counts from the start.
    repo.outbox_add(&[a.id], 10).await.unwrap();
    assert_eq!(relay.drain().await.unwrap(), 1);
    let again = tokio::time::timeout(Duration::from_secs(10), waiting).await;
    assert_eq!(again.expect("delivered").unwrap().unwrap(), Some(1));
    drop_database(repo).await;
}

/// A fresh database with two photos waiting for their renders.
async fn two_photos() -> (SqlRepo, [uuid::Uuid; 2]) {
    let repo = repo().await;
    let (owner, album) = owner_with_album(&repo).await;
    let (a, b) = (photo(1, owner, album.id), photo(2, owner, album.id));
    for p in [&a, &b] {
        repo.insert_image(p, &[]).await.unwrap();
    }
    (repo, [a.id, b.id])
}

/// Starts an embedded process over `repo` as a start does: what the last
/// one sent waits again, and the photos are recorded again.
async fn restart(repo: &SqlRepo, photos: &[uuid::Uuid]) -> (Arc<MemoryQueue>, Relay) {
    repo.outbox_resend().await.unwrap();
    repo.outbox_recorded_again(photos, 9).await.unwrap();
    let (queue, relay) = embedded(repo);
    relay.drain().await.unwrap();
    (queue, relay)
}

#[tokio::test]
async fn a_photo_that_ran_beside_the_culprit_is_not_counted_down_with_it() {
    use crate::queue::memory::MAX_ATTEMPTS;
    let (repo, both) = two_photos().await;
    // First start: both run side by side, and the process dies.
    let (queue, relay) = restart(&repo, &both).await;
    let first = (queue.next().await.unwrap(), queue.next().await.unwrap());
    drop((first, queue, relay));
    // Each later start: the oldest runs alone and takes the process down
    // again; the other waits its turn, so it is not counted.
    let mut culprit = None;
    for start in 2..=MAX_ATTEMPTS {
        let (queue, relay) = restart(&repo, &both).await;
        let alone = queue.next().await.unwrap().unwrap();
        assert_eq!(alone.attempt, start);
        assert_eq!(
            *culprit.get_or_insert(alone.job.image_id),
            alone.job.image_id
        );
        let other = tokio::time::timeout(Duration::from_millis(200), queue.next()).await;
        assert!(other.is_err(), "start {start}: a suspect job runs alone");
        drop((alone, queue, relay));
    }
    // The sixth start gives the culprit up; the other runs, its second start.
    let (queue, _relay) = restart(&repo, &both).await;
    let next = tokio::time::timeout(Duration::from_secs(10), queue.next()).await;
    let other = next.expect("the other runs").unwrap().unwrap();
    assert_ne!(Some(other.job.image_id), culprit);
    assert_eq!(other.attempt, 2);
    other.settle.ack().await.unwrap();
    assert_eq!(rows(&repo).await, 0);
    drop_database(repo).await;
}

#[tokio::test]
async fn jobs_handed_back_at_shutdown_are_not_counted_against_them() {
    use crate::queue::memory::MAX_ATTEMPTS;
    let (repo, both) = two_photos().await;
    // More restarts than attempts, each cutting both jobs short: each start
    // is their first again, side by side.
    for _ in 0..=MAX_ATTEMPTS {
        let (queue, relay) = restart(&repo, &both).await;
        let mut running = Vec::new();
        for _ in 0..2 {
            let next = tokio::time::timeout(Duration::from_secs(10), queue.next()).await;
            let d = next.expect("both run at once").unwrap().unwrap();
            assert_eq!(d.attempt, 1);
            running.push(d);
        }
        for d in &running {
            d.settle.hand_back().await.unwrap();
        }
        drop((running, queue, relay));
    }
    drop_database(repo).await;
}
