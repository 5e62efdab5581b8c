//! Against a real API server: ignored unless run on purpose, with
//! `LIGHTBOX_TEST_KUBECONFIG` naming a kubeconfig whose cluster has the CRDs
//! from `crds/` installed and a lightbox-controller running:
//! `LIGHTBOX_TEST_KUBECONFIG=~/.kube/config cargo test -p lightbox-controller --test real_cluster -- --ignored`
//! Not verified in this project's CI, which has no Kubernetes cluster.

use kube::api::{Api, DeleteParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use lightbox_controller::resources::CropPreset;
use std::time::{Duration, Instant};

async fn client() -> kube::Client {
    let path = std::env::var("LIGHTBOX_TEST_KUBECONFIG").expect("set LIGHTBOX_TEST_KUBECONFIG");
    let kubeconfig = Kubeconfig::read_from(path).expect("kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .expect("kube config");
    kube::Client::try_from(config).expect("client")
}

fn example() -> CropPreset {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../crds/examples/croppreset.yaml"),
    )
    .unwrap();
    let mut p: CropPreset = serde_saphyr::from_str(&text).unwrap();
    p.metadata.namespace = Some("default".into());
    p.metadata.name = Some(format!(
        "e2e-{}",
        &uuid::Uuid::new_v4().simple().to_string()[..8]
    ));
    p
}

#[tokio::test]
#[ignore = "needs a Kubernetes cluster: LIGHTBOX_TEST_KUBECONFIG"]
async fn a_crop_preset_becomes_ready_and_its_deletion_completes() {
    let api: Api<CropPreset> = Api::namespaced(client().await, "default");
    let p = example();
    let name = p.metadata.name.clone().unwrap();
    api.create(&PostParams::default(), &p).await.unwrap();
    let start = Instant::now();
    loop {
        let got = api.get(&name).await.unwrap();
        let ready = got.status.as_ref().and_then(|s| {
            s.conditions
                .iter()
                .find(|c| c.type_ == "Ready")
                .map(|c| c.status.clone())
        });
        if ready.as_deref() == Some("True") {
            assert_eq!(
                got.status.unwrap().observed_generation,
                got.metadata.generation
            );
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "never Ready");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let mut bad = example();
    bad.spec.width = 0;
    bad.spec.height = 0;
    assert!(
        api.create(&PostParams::default(), &bad).await.is_err(),
        "a 0x0 preset was admitted"
    );
    api.delete(&name, &DeleteParams::default()).await.unwrap();
    let start = Instant::now();
    while api.get_opt(&name).await.unwrap().is_some() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the finalizer was never released"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}
