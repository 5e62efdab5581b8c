//! The in-process queue on its own: order, retries, and its slots.

use super::*;

#[tokio::test]
async fn jobs_come_out_in_order() {
    let q = MemoryQueue::new(2);
    let (a, b) = (uuid::Uuid::new_v4(), uuid::Uuid::new_v4());
    q.publish(RenderJob { image_id: a }, "1").await.unwrap();
    q.publish(RenderJob { image_id: b }, "2").await.unwrap();
    assert_eq!(q.next().await.unwrap().unwrap().job.image_id, a);
    assert_eq!(q.next().await.unwrap().unwrap().job.image_id, b);
    assert_eq!(q.depth().await.unwrap(), 2);
}

#[tokio::test]
async fn slots_count_what_is_queued_and_what_is_taken() {
    let q = MemoryQueue::new(3);
    for n in 0..2 {
        let job = RenderJob {
            image_id: uuid::Uuid::new_v4(),
        };
        q.publish(job, &n.to_string()).await.unwrap();
    }
    let want = |idle, busy, queued| Slots { idle, busy, queued };
    assert_eq!(q.slots().await.unwrap(), want(3, 0, 2));
    assert_eq!(q.slots().await.unwrap().room(), 1);
    let taken = q.next().await.unwrap().unwrap();
    assert_eq!(q.slots().await.unwrap(), want(2, 1, 1));
    taken.settle.retry(Duration::from_secs(3600)).await.unwrap();
    drop(taken);
    assert_eq!(
        q.slots().await.unwrap(),
        want(3, 0, 2),
        "a retry waits as queued"
    );
}

#[tokio::test(start_paused = true)]
async fn a_job_handed_back_comes_again_with_the_next_attempt() {
    let q = MemoryQueue::new(1);
    let id = uuid::Uuid::new_v4();
    q.publish(RenderJob { image_id: id }, "1").await.unwrap();
    let first = q.next().await.unwrap().unwrap();
    assert_eq!((first.attempt, first.is_last()), (1, false));
    first.settle.retry(Duration::from_secs(2)).await.unwrap();
    let second = q.next().await.unwrap().unwrap();
    assert_eq!((second.job.image_id, second.attempt), (id, 2));
    second.settle.ack().await.unwrap();
    assert_eq!(q.depth().await.unwrap(), 0);
}
