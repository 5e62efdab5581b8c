//! Which namespaces one installation reconciles. Two installations in one
//! cluster each watch their own namespaces, so neither writes the other's
//! resources into its database.

use k8s_openapi::NamespaceResourceScope;
use kube::{Api, Resource};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// Every namespace (needs a ClusterRole).
    All,
    /// These namespaces only (a Role in each), sorted, without repeats.
    Namespaces(Vec<String>),
}

impl Scope {
    /// A comma-separated list; empty means every namespace.
    pub fn parse(list: &str) -> Scope {
        let mut names: Vec<String> = list
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        names.sort();
        names.dedup();
        if names.is_empty() {
            Scope::All
        } else {
            Scope::Namespaces(names)
        }
    }

    /// One API handle per watched namespace, or one over all of them.
    pub fn apis<K>(&self, client: &kube::Client) -> Vec<Api<K>>
    where
        K: Resource<Scope = NamespaceResourceScope>,
        K::DynamicType: Default,
    {
        match self {
            Scope::All => vec![Api::all(client.clone())],
            Scope::Namespaces(names) => names
                .iter()
                .map(|ns| Api::namespaced(client.clone(), ns))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_is_trimmed_sorted_and_empty_means_all() {
        assert_eq!(Scope::parse(""), Scope::All);
        assert_eq!(Scope::parse(" , "), Scope::All);
        assert_eq!(
            Scope::parse("b, a,b"),
            Scope::Namespaces(vec!["a".into(), "b".into()])
        );
    }
}
