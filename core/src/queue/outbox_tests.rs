//! The relay and the in-process queue against a real database: work sent
//! to that queue stays in the outbox until its job is answered, a
//! request renewed meanwhile outlives the older job's answer, the relay
//! of the next process hands out again what the last one had sent, and
//! the slots go to owners fairly.

use super::{turns_for_tests, Relay};
use crate::db::testing::{drop_database, outbox_rows as rows, owner_with_album, photo, repo};
use crate::db::{DynRepo, ImageRepo, OutboxRepo, OutboxRow, SqlRepo};
use crate::queue::{Delivery, JobQueue, MemoryQueue, RenderJob, Slots};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use uuid::Uuid;

fn embedded(repo: &SqlRepo) -> (Arc<MemoryQueue>, Relay) {
    let repo: DynRepo = Arc::new(repo.clone());
    let queue = Arc::new(MemoryQueue::with_outbox(repo.clone(), 8));
    (queue.clone(), Relay::new(repo, queue))
}

/// What a worker does when a job is answered for good.
async fn done(repo: &SqlRepo, d: Delivery) {
    let row = OutboxRow {
        image_id: d.job.image_id,
        ticket: d.ticket.clone().expect("a ticket"),
    };
    repo.outbox_remove(&row).await.unwrap();
    d.settle.ack().await.unwrap();
}

async fn hand_out(relay: &Relay) -> usize {
    relay.hand_out().await.unwrap().sent
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
    assert_eq!(hand_out(&relay).await, 2);
    assert_eq!(repo.outbox_len().await.unwrap(), 0, "nothing left to send");
    assert_eq!(rows(&repo).await, 2, "both kept while their jobs wait");
    assert_eq!(hand_out(&relay).await, 0, "a sent row goes out once");

    let (first, second) = (queue.next().await.unwrap(), queue.next().await.unwrap());
    let (first, second) = (first.unwrap(), second.unwrap());
    let (of_a, of_b) = if first.job.image_id == a.id {
        (first, second)
    } else {
        (second, first)
    };
    assert_eq!(of_b.job.image_id, b.id);
    // b is asked for again while its job runs: that job may have read b
    // before the change, so the renewed request outlives its answer. It
    // waits for that answer: no second job of b runs beside the first, and
    // b still counts as in flight for its owner.
    repo.outbox_add(&[b.id], 5).await.unwrap();
    assert_eq!(repo.outbox_len().await.unwrap(), 0, "nothing waits yet");
    assert_eq!(repo.outbox_in_flight().await.unwrap(), vec![(owner, 2)]);
    done(&repo, of_b).await;
    done(&repo, of_a).await;
    assert_eq!(rows(&repo).await, 1, "a's row goes with its job, b's stays");
    assert_eq!(repo.outbox_len().await.unwrap(), 1, "b's waits to be sent");
    assert_eq!(hand_out(&relay).await, 1);
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
    done(&repo, again).await;
    assert_eq!(rows(&repo).await, 0);
    assert_eq!(queue.depth().await.unwrap(), 0);
    stop.send(true).unwrap();
    running.await.unwrap();
    drop_database(repo).await;
}

/// A queue that keeps what it is sent (as JetStream does), with four
/// idle workers that take nothing.
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
    async fn slots(&self) -> crate::Result<Slots> {
        Ok(Slots {
            idle: 4,
            busy: 0,
            queued: self.0.lock().unwrap().len() as u64,
        })
    }
    async fn check(&self) -> crate::Result<()> {
        Ok(())
    }
    fn progress_interval(&self) -> Duration {
        Duration::from_secs(1)
    }
    fn dies_with_process(&self) -> bool {
        false
    }
}

#[tokio::test]
async fn a_queue_that_keeps_work_keeps_its_rows_sent_until_they_are_lost() {
    let repo = repo().await;
    let (owner, album) = owner_with_album(&repo).await;
    let (a, b) = (photo(1, owner, album.id), photo(2, owner, album.id));
    repo.insert_image(&a, &[]).await.unwrap();
    repo.insert_image(&b, &[]).await.unwrap();
    let dyn_repo: DynRepo = Arc::new(repo.clone());
    let queue = Arc::new(Keeping::default());
    let relay = Relay::new(dyn_repo.clone(), queue.clone());
    assert_eq!(hand_out(&relay).await, 2);
    assert_eq!(
        rows(&repo).await,
        2,
        "kept, marked sent, while the queue holds them"
    );
    // A restart does not hand them out again: the queue still has them.
    let relay = Relay::new(dyn_repo, queue.clone());
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let running = tokio::spawn(relay.clone().run(stopped));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(queue.0.lock().unwrap().len(), 2, "each sent once");
    stop.send(true).unwrap();
    running.await.unwrap();
    // The queue loses them (a stream purged); rows sent long ago wait again.
    queue.0.lock().unwrap().clear();
    assert_eq!(
        hand_out(&relay).await,
        0,
        "sent just now: not yet taken as lost"
    );
    let long_ago = crate::time::now_ms() - 600_000;
    assert!(repo.outbox_heads(10, 10, 10).await.unwrap().is_empty());
    crate::db::testing::outbox_sent_at(&repo, long_ago).await;
    assert_eq!(hand_out(&relay).await, 2, "lost, and handed out again");
    assert_eq!(queue.0.lock().unwrap().len(), 2);
    drop_database(repo).await;
}

#[tokio::test]
async fn one_owners_backlog_leaves_a_slot_for_another_owners_first_job() {
    let repo = repo().await;
    let (flood, flood_album) = owner_with_album(&repo).await;
    for n in 0..10 {
        repo.insert_image(&photo(n, flood, flood_album.id), &[])
            .await
            .unwrap();
    }
    let (other, other_album) =
        crate::db::testing::owner_with_album_as(&repo, "p@example.com").await;
    let late = photo(99, other, other_album.id);
    let dyn_repo: DynRepo = Arc::new(repo.clone());
    let queue = Arc::new(MemoryQueue::with_outbox(dyn_repo.clone(), 3));
    let relay = Relay::new(dyn_repo, queue.clone());
    assert_eq!(hand_out(&relay).await, 2, "every slot but one");
    let (one, two) = (
        queue.next().await.unwrap().unwrap(),
        queue.next().await.unwrap().unwrap(),
    );
    assert_eq!(
        hand_out(&relay).await,
        0,
        "the flood waits for its own slots"
    );
    repo.insert_image(&late, &[]).await.unwrap();
    assert_eq!(hand_out(&relay).await, 1);
    let third = queue.next().await.unwrap().unwrap();
    assert_eq!(
        third.job.image_id, late.id,
        "the other owner's job runs at once"
    );
    done(&repo, one).await;
    assert_eq!(
        hand_out(&relay).await,
        1,
        "a freed slot goes back to the flood"
    );
    drop((two, third));
    drop_database(repo).await;
}

#[test]
fn owners_take_turns_fewest_in_flight_first() {
    let (a, b, c) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
    let row = |n: u8| OutboxRow {
        image_id: Uuid::from_bytes([n; 16]),
        ticket: n.to_string(),
    };
    // Oldest first: four of a's, then b's, then c's.
    let heads = vec![
        (row(1), a),
        (row(2), a),
        (row(3), a),
        (row(4), a),
        (row(5), b),
        (row(6), b),
        (row(7), c),
    ];
    let in_flight = HashMap::from([(b, 1)]);
    let slots = Slots {
        idle: 5,
        busy: 0,
        queued: 0,
    };
    let order: Vec<u8> = turns_for_tests(heads, in_flight, slots)
        .iter()
        .map(|r| r.image_id.as_bytes()[0])
        .collect();
    // a and c have none in flight (a's row is older), then b joins them.
    assert_eq!(order, vec![1, 7, 2, 5, 3]);
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
        assert_eq!(hand_out(&relay).await, 1);
        let d = queue.next().await.unwrap().unwrap();
        assert_eq!((d.job.image_id, d.attempt), (a.id, start));
        assert_eq!(d.is_last(), start == MAX_ATTEMPTS);
        // The job takes the process down: nothing answers it.
        drop((d, queue, relay));
    }
    repo.outbox_resend().await.unwrap();
    let (queue, relay) = embedded(&repo);
    let mut given_up = queue.exhausted().await.unwrap();
    assert_eq!(hand_out(&relay).await, 1);
    let waiting = {
        let queue = queue.clone();
        tokio::spawn(async move { queue.next().await.map(|d| d.map(|d| d.attempt)) })
    };
    let job = tokio::time::timeout(Duration::from_secs(10), given_up.next()).await;
    assert_eq!(job.expect("given up").map(|(j, _)| j.image_id), Some(a.id));
    assert_eq!(
        rows(&repo).await,
        0,
        "its row is gone, so no start sends it"
    );
    assert_eq!(queue.depth().await.unwrap(), 0);

    // Asked for again (an owner's change), it counts from the start.
    repo.outbox_add(&[a.id], 10).await.unwrap();
    assert_eq!(hand_out(&relay).await, 1);
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
    hand_out(&relay).await;
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
    done(&repo, other).await;
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
