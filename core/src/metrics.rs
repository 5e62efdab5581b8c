//! Prometheus metrics, one registry per process, served at `/metrics` by
//! every binary. Label values come from fixed sets (method table entries,
//! route templates, preset codes, error codes), never from raw input.

use prometheus::{
    Encoder, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, Opts,
    Registry, TextEncoder,
};
use std::sync::LazyLock;
use std::time::Duration;

pub struct Metrics {
    registry: Registry,
    rpc_requests: IntCounterVec,
    rpc_seconds: HistogramVec,
    http_requests: IntCounterVec,
    http_seconds: HistogramVec,
    renders: IntCounterVec,
    render_seconds: HistogramVec,
    render_jobs: IntCounterVec,
    errors: IntCounterVec,
    reconciles: IntCounterVec,
    reconcile_seconds: HistogramVec,
    image_waits: IntCounterVec,
    password_hashes: IntCounterVec,
    pub image_waits_held: IntGauge,
    pub queue_depth: IntGauge,
    pub outbox_pending: IntGauge,
    pub redeliveries: IntCounter,
    pub upload_bytes: IntCounter,
    pub deadlock_retries: IntCounter,
    pub connections_refused: IntCounter,
}

const LATENCY: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];
const RENDER: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

fn counter(r: &Registry, name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
    let c = IntCounterVec::new(Opts::new(name, help), labels).expect("metric definition");
    r.register(Box::new(c.clone()))
        .expect("metric registration");
    c
}

fn histogram(r: &Registry, name: &str, help: &str, labels: &[&str], b: &[f64]) -> HistogramVec {
    let opts = HistogramOpts::new(name, help).buckets(b.to_vec());
    let h = HistogramVec::new(opts, labels).expect("metric definition");
    r.register(Box::new(h.clone()))
        .expect("metric registration");
    h
}

fn gauge(r: &Registry, name: &str, help: &str) -> IntGauge {
    let g = IntGauge::new(name, help).expect("metric definition");
    r.register(Box::new(g.clone()))
        .expect("metric registration");
    g
}

fn single(r: &Registry, name: &str, help: &str) -> IntCounter {
    let c = IntCounter::new(name, help).expect("metric definition");
    r.register(Box::new(c.clone()))
        .expect("metric registration");
    c
}

impl Metrics {
    fn new() -> Metrics {
        let r = Registry::new_custom(Some("lightbox".into()), None).expect("registry");
        Metrics {
            rpc_requests: counter(
                &r,
                "rpc_requests_total",
                "JSON-RPC calls by method and outcome (ok or the error code)",
                &["method", "outcome"],
            ),
            rpc_seconds: histogram(
                &r,
                "rpc_duration_seconds",
                "JSON-RPC call latency by method",
                &["method"],
                LATENCY,
            ),
            http_requests: counter(
                &r,
                "http_requests_total",
                "HTTP requests by route template and status",
                &["route", "status"],
            ),
            http_seconds: histogram(
                &r,
                "http_request_duration_seconds",
                "HTTP latency by route template",
                &["route"],
                LATENCY,
            ),
            renders: counter(
                &r,
                "renders_total",
                "Renders produced by preset code and format",
                &["preset", "format"],
            ),
            render_seconds: histogram(
                &r,
                "render_duration_seconds",
                "Resize and encode time of one render",
                &["preset", "format"],
                RENDER,
            ),
            render_jobs: counter(
                &r,
                "render_jobs_total",
                "Render jobs by outcome: done, retried, failed, handed_back",
                &["outcome"],
            ),
            errors: counter(
                &r,
                "errors_total",
                "Errors answered, by error code",
                &["code"],
            ),
            reconciles: counter(
                &r,
                "reconciles_total",
                "Controller reconciles by resource kind and outcome",
                &["kind", "outcome"],
            ),
            reconcile_seconds: histogram(
                &r,
                "reconcile_duration_seconds",
                "Controller reconcile time by resource kind",
                &["kind"],
                LATENCY,
            ),
            image_waits: counter(
                &r,
                "image_waits_total",
                "image.get calls that asked to wait (Prefer: wait), by how they ended: at_once \
                 (not processing), settled (while held), deadline, stopping (shutdown), \
                 cancelled (the client left), error, refused (over the caps)",
                &["ended"],
            ),
            password_hashes: counter(
                &r,
                "password_hashes_total",
                "Argon2 jobs by outcome: done, abandoned (the caller was gone when its turn \
                 came; nothing hashed), refused (the queue was full; 4002)",
                &["outcome"],
            ),
            image_waits_held: gauge(
                &r,
                "image_waits_held",
                "image.get calls held now, waiting for their photo to settle",
            ),
            queue_depth: gauge(
                &r,
                "queue_depth",
                "Render jobs waiting or in progress in the queue",
            ),
            outbox_pending: gauge(
                &r,
                "outbox_pending",
                "Render jobs recorded but not yet handed to the queue",
            ),
            redeliveries: single(
                &r,
                "queue_redeliveries_total",
                "Render jobs delivered more than once",
            ),
            upload_bytes: single(&r, "upload_bytes_total", "Bytes of originals stored"),
            deadlock_retries: single(
                &r,
                "db_deadlock_retries_total",
                "Transactions run again after PostgreSQL aborted them to break a deadlock",
            ),
            connections_refused: single(
                &r,
                "connections_refused_total",
                "Connections closed at once: their address had LIGHTBOX_MAX_CONNECTIONS_PER_ADDRESS open",
            ),
            registry: r,
        }
    }

    /// `outcome` is `done`, `abandoned` or `refused`.
    pub fn password_hash(&self, outcome: &str) {
        self.password_hashes.with_label_values(&[outcome]).inc();
    }

    pub fn rpc(&self, method: &str, code: Option<i64>, took: Duration) {
        let outcome = code.map_or_else(|| "ok".to_owned(), |c| c.to_string());
        self.rpc_requests
            .with_label_values(&[method, &outcome])
            .inc();
        self.rpc_seconds
            .with_label_values(&[method])
            .observe(took.as_secs_f64());
        if let Some(code) = code {
            self.error(code);
        }
    }

    /// `status` as its three digits (`StatusCode::as_str`, no allocation:
    /// this runs for every request).
    pub fn http(&self, route: &str, status: &str, took: Duration) {
        self.http_requests.with_label_values(&[route, status]).inc();
        self.http_seconds
            .with_label_values(&[route])
            .observe(took.as_secs_f64());
    }

    /// `route`'s series resolved once, for a route that answers most of
    /// the requests (`/i/`): its 200s and its latency then skip the label
    /// lookups.
    pub fn route(&self, route: &'static str) -> RouteMetrics {
        RouteMetrics {
            route,
            ok: self.http_requests.with_label_values(&[route, "200"]),
            seconds: self.http_seconds.with_label_values(&[route]),
        }
    }

    pub fn error(&self, code: i64) {
        self.errors.with_label_values(&[&code.to_string()]).inc();
    }

    pub fn render(&self, preset: &str, format: &str, took: Duration) {
        self.renders.with_label_values(&[preset, format]).inc();
        self.render_seconds
            .with_label_values(&[preset, format])
            .observe(took.as_secs_f64());
    }

    pub fn reconcile(&self, kind: &str, ok: bool, took: Duration) {
        let outcome = if ok { "ok" } else { "error" };
        self.reconciles.with_label_values(&[kind, outcome]).inc();
        self.reconcile_seconds
            .with_label_values(&[kind])
            .observe(took.as_secs_f64());
    }

    pub fn image_wait(&self, ended: &str) {
        self.image_waits.with_label_values(&[ended]).inc();
    }

    pub fn render_job(&self, outcome: &str) {
        self.render_jobs.with_label_values(&[outcome]).inc();
    }

    /// The text exposition format.
    pub fn text(&self) -> String {
        let mut out = Vec::new();
        let _ = TextEncoder::new().encode(&self.registry.gather(), &mut out);
        String::from_utf8(out).unwrap_or_default()
    }
}

/// `Metrics::http` for one route, its common series resolved (`route`).
#[derive(Clone)]
pub struct RouteMetrics {
    route: &'static str,
    ok: IntCounter,
    seconds: Histogram,
}

impl RouteMetrics {
    pub fn route(&self) -> &'static str {
        self.route
    }

    /// As `METRICS.http(route, status, took)`.
    pub fn http(&self, status: &str, took: Duration) {
        if status == "200" {
            self.ok.inc();
        } else {
            METRICS
                .http_requests
                .with_label_values(&[self.route, status])
                .inc();
        }
        self.seconds.observe(took.as_secs_f64());
    }
}

pub static METRICS: LazyLock<Metrics> = LazyLock::new(Metrics::new);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_values_appear_in_the_exposition() {
        METRICS.rpc("image.get", Some(2001), Duration::from_millis(3));
        METRICS.render("thumb", "webp", Duration::from_millis(40));
        let text = METRICS.text();
        assert!(text.contains(r#"lightbox_rpc_requests_total{method="image.get",outcome="2001"} "#));
        assert!(text.contains(r#"lightbox_errors_total{code="2001"} "#));
        assert!(text.contains(r#"lightbox_renders_total{format="webp",preset="thumb"} "#));
        assert!(text.contains("lightbox_render_duration_seconds_bucket"));
    }
}
