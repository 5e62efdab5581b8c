//! Every call lightbox-controller makes to the Kubernetes API. The chart's
//! RBAC is checked against this list (controller/tests/chart.rs), and the
//! mock API server tests check each request the reconcilers make is on it
//! (controller/tests/reconcile.rs), so the two cannot drift apart.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Call {
    pub group: &'static str,
    /// With its subresource, as RBAC names it: `croppresets/status`.
    pub resource: &'static str,
    pub verb: &'static str,
    /// Made in the controller's own namespace only (a Role, not a ClusterRole).
    pub own_namespace: bool,
}

const fn call(group: &'static str, resource: &'static str, verb: &'static str) -> Call {
    Call {
        group,
        resource,
        verb,
        own_namespace: false,
    }
}

const fn own(group: &'static str, resource: &'static str, verb: &'static str) -> Call {
    Call {
        group,
        resource,
        verb,
        own_namespace: true,
    }
}

pub const CALLS: &[Call] = &[
    // The Controllers' watches.
    call("lightbox.dev", "croppresets", "list"),
    call("lightbox.dev", "croppresets", "watch"),
    call("lightbox.dev", "aliaslimits", "list"),
    call("lightbox.dev", "aliaslimits", "watch"),
    call("lightbox.dev", "renderquotas", "list"),
    call("lightbox.dev", "renderquotas", "watch"),
    // Finalizers added and released (JSON patches).
    call("lightbox.dev", "croppresets", "patch"),
    call("lightbox.dev", "aliaslimits", "patch"),
    call("lightbox.dev", "renderquotas", "patch"),
    // Status by server-side apply.
    call("lightbox.dev", "croppresets/status", "patch"),
    call("lightbox.dev", "aliaslimits/status", "patch"),
    call("lightbox.dev", "renderquotas/status", "patch"),
    // The Recorder creates an event, then patches it when it repeats.
    call("events.k8s.io", "events", "create"),
    call("events.k8s.io", "events", "patch"),
    // Leader election.
    own("coordination.k8s.io", "leases", "get"),
    own("coordination.k8s.io", "leases", "create"),
    own("coordination.k8s.io", "leases", "update"),
];

/// The pre-delete hook's calls (`uninstall.rs`), granted to its own
/// ServiceAccount only: the controller itself deletes nothing.
pub const UNINSTALL_CALLS: &[Call] = &[
    call("lightbox.dev", "croppresets", "list"),
    call("lightbox.dev", "croppresets", "delete"),
    call("lightbox.dev", "croppresets", "patch"),
    call("lightbox.dev", "aliaslimits", "list"),
    call("lightbox.dev", "aliaslimits", "delete"),
    call("lightbox.dev", "aliaslimits", "patch"),
    call("lightbox.dev", "renderquotas", "list"),
    call("lightbox.dev", "renderquotas", "delete"),
    call("lightbox.dev", "renderquotas", "patch"),
];

/// The RBAC call an HTTP request to the API server is, from its method and path.
pub fn call_of(method: &str, path: &str) -> Option<(String, String, &'static str)> {
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let (group, rest) = match parts.as_slice() {
        ["apis", group, _version, rest @ ..] => (group.to_string(), rest),
        ["api", _version, rest @ ..] => (String::new(), rest),
        _ => return None,
    };
    let rest = match rest {
        ["namespaces", _ns, rest @ ..] => rest,
        rest => rest,
    };
    let (resource, named) = match rest {
        [resource] => (resource.to_string(), false),
        [resource, _name] => (resource.to_string(), true),
        [resource, _name, sub] => (format!("{resource}/{sub}"), true),
        _ => return None,
    };
    let verb = match (method, named) {
        ("GET", true) => "get",
        ("GET", false) => "list",
        ("POST", _) => "create",
        ("PATCH", _) => "patch",
        ("PUT", _) => "update",
        ("DELETE", _) => "delete",
        _ => return None,
    };
    Some((group, resource, verb))
}

/// Whether the request is one of `CALLS`.
pub fn listed(method: &str, path: &str) -> bool {
    call_of(method, path).is_some_and(|(g, r, v)| {
        CALLS
            .iter()
            .any(|c| c.group == g && c.resource == r && c.verb == v)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_map_to_their_rbac_calls() {
        let status = "/apis/lightbox.dev/v1/namespaces/a/croppresets/x/status";
        assert_eq!(
            call_of("PATCH", status),
            Some(("lightbox.dev".into(), "croppresets/status".into(), "patch"))
        );
        assert!(listed("POST", "/apis/events.k8s.io/v1/namespaces/a/events"));
        assert!(listed(
            "PUT",
            "/apis/coordination.k8s.io/v1/namespaces/a/leases/l"
        ));
        assert!(!listed(
            "DELETE",
            "/apis/lightbox.dev/v1/namespaces/a/croppresets/x"
        ));
        assert!(!listed("GET", "/api/v1/namespaces/a/secrets/s"));
    }
}
