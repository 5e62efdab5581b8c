//! Leader election on a `coordination.k8s.io` Lease, so that of several
//! replicas exactly one reconciles. The holder renews every third of the
//! lease; another replica takes over only once a renewal is overdue. A
//! leader that cannot renew in time stops acting (the process exits and is
//! restarted as a candidate), so two never act at once.

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{Api, ObjectMeta, PostParams};
use std::time::Duration;

/// The Lease of a controller started without `LIGHTBOX_LEASE_NAME`; the
/// chart names one per release, so two installations never share it.
pub const LEASE_NAME: &str = "lightbox-controller";
pub const LEASE_DURATION: Duration = Duration::from_secs(15);

/// What a candidate does with the lease it read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// No lease yet: create it, holding it.
    Create,
    /// Ours: renew it.
    Renew,
    /// Someone else's and overdue: take it.
    TakeOver,
    /// Someone else's and fresh: wait.
    Wait,
}

pub fn decide(spec: Option<&LeaseSpec>, me: &str, now: Timestamp) -> Step {
    let Some(spec) = spec else {
        return Step::Create;
    };
    if spec.holder_identity.as_deref() == Some(me) {
        return Step::Renew;
    }
    let seconds = spec
        .lease_duration_seconds
        .unwrap_or(LEASE_DURATION.as_secs() as i32);
    let expires = spec
        .renew_time
        .as_ref()
        .map(|t| t.0 + SignedDuration::from_secs(i64::from(seconds)));
    match (spec.holder_identity.as_deref(), expires) {
        (None | Some(""), _) | (_, None) => Step::TakeOver,
        (_, Some(at)) if at < now => Step::TakeOver,
        _ => Step::Wait,
    }
}

pub struct LeaseLock {
    api: Api<Lease>,
    name: String,
    identity: String,
}

impl LeaseLock {
    pub fn new(client: kube::Client, namespace: &str, name: &str, identity: &str) -> LeaseLock {
        LeaseLock {
            api: Api::namespaced(client, namespace),
            name: name.to_owned(),
            identity: identity.to_owned(),
        }
    }

    fn spec(&self, now: Timestamp, previous: Option<&LeaseSpec>, step: Step) -> LeaseSpec {
        let transitions = previous.and_then(|p| p.lease_transitions).unwrap_or(0);
        LeaseSpec {
            holder_identity: Some(self.identity.clone()),
            lease_duration_seconds: Some(LEASE_DURATION.as_secs() as i32),
            acquire_time: match step {
                Step::Renew => previous.and_then(|p| p.acquire_time.clone()),
                _ => Some(MicroTime(now)),
            },
            renew_time: Some(MicroTime(now)),
            lease_transitions: Some(match step {
                Step::TakeOver => transitions + 1,
                _ => transitions,
            }),
            ..Default::default()
        }
    }

    /// One attempt; true when this replica holds the lease afterwards. A
    /// write that loses a race (409) is a plain "no".
    pub async fn try_hold(&self) -> Result<bool, kube::Error> {
        let now = Timestamp::now();
        let current = self.api.get_opt(&self.name).await?;
        let step = decide(
            current.as_ref().and_then(|l| l.spec.as_ref()),
            &self.identity,
            now,
        );
        let written = match (step, current) {
            (Step::Wait, _) => return Ok(false),
            (Step::Create, _) | (_, None) => {
                let lease = Lease {
                    metadata: ObjectMeta {
                        name: Some(self.name.clone()),
                        ..Default::default()
                    },
                    spec: Some(self.spec(now, None, Step::Create)),
                };
                self.api.create(&PostParams::default(), &lease).await
            }
            (step, Some(mut lease)) => {
                lease.spec = Some(self.spec(now, lease.spec.as_ref(), step));
                self.api
                    .replace(&self.name, &PostParams::default(), &lease)
                    .await
            }
        };
        match written {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(e)) if e.code == 409 => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Hands the lease back on shutdown (holder cleared, as client-go's
    /// ReleaseOnCancel does), so a standby takes over at once instead of
    /// after the lease runs out. Only a lease this replica holds is touched.
    pub async fn release(&self) -> Result<(), kube::Error> {
        let Some(mut lease) = self.api.get_opt(&self.name).await? else {
            return Ok(());
        };
        let Some(spec) = lease.spec.as_mut() else {
            return Ok(());
        };
        if spec.holder_identity.as_deref() != Some(self.identity.as_str()) {
            return Ok(());
        }
        spec.holder_identity = None;
        spec.lease_duration_seconds = Some(1);
        spec.renew_time = Some(MicroTime(Timestamp::now()));
        match self
            .api
            .replace(&self.name, &PostParams::default(), &lease)
            .await
        {
            Ok(_) => Ok(()),
            // Someone wrote it meanwhile: it is no longer ours to release.
            Err(kube::Error::Api(e)) if e.code == 409 => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Waits until this replica leads.
    pub async fn acquire(&self) {
        loop {
            match self.try_hold().await {
                Ok(true) => return,
                Ok(false) => {}
                Err(e) => tracing::warn!(error = %e, "lease unavailable"),
            }
            tokio::time::sleep(LEASE_DURATION / 3).await;
        }
    }

    /// Renews until a renewal fails for longer than the lease lasts; returns
    /// then, and the caller must stop acting.
    pub async fn keep(&self) {
        let mut last = std::time::Instant::now();
        loop {
            tokio::time::sleep(LEASE_DURATION / 3).await;
            match self.try_hold().await {
                Ok(true) => last = std::time::Instant::now(),
                Ok(false) => return,
                Err(e) => tracing::warn!(error = %e, "lease renewal failed"),
            }
            // Stop before another replica may take over.
            if last.elapsed() >= LEASE_DURATION * 2 / 3 {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(by: &str, renewed_s_ago: i64) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(by.into()),
            lease_duration_seconds: Some(15),
            renew_time: Some(MicroTime(
                Timestamp::now() - SignedDuration::from_secs(renewed_s_ago),
            )),
            ..Default::default()
        }
    }

    #[test]
    fn a_missing_lease_is_created() {
        assert_eq!(decide(None, "a", Timestamp::now()), Step::Create);
    }

    #[test]
    fn the_holder_renews_and_others_wait_while_it_is_fresh() {
        assert_eq!(
            decide(Some(&held("a", 5)), "a", Timestamp::now()),
            Step::Renew
        );
        assert_eq!(
            decide(Some(&held("a", 5)), "b", Timestamp::now()),
            Step::Wait
        );
    }

    #[test]
    fn an_overdue_or_empty_lease_is_taken_over() {
        assert_eq!(
            decide(Some(&held("a", 16)), "b", Timestamp::now()),
            Step::TakeOver
        );
        let empty = LeaseSpec::default();
        assert_eq!(decide(Some(&empty), "b", Timestamp::now()), Step::TakeOver);
    }
}
