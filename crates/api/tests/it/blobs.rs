//! Blobs over real HTTPS: an upload lands in `blobs/in` under its SHA-256 only when the
//! content matches the name; a wrong, oversized or nameless upload leaves nothing behind and
//! gets a typed 4xx; a produced blob in `blobs/out` downloads byte for byte.

use crate::common;

use client::ClientError;
use common::Node;
use registry::BlobId;
use serde_json::Value;
use sha2::{Digest, Sha256};

fn id_of(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

fn files(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

fn error_of(resp: &client::Response) -> (u16, String, String) {
    let body: Value = serde_json::from_slice(&resp.body).expect("a JSON error");
    (
        resp.status,
        body["code"].as_str().unwrap().to_owned(),
        body["field"].as_str().unwrap().to_owned(),
    )
}

#[test]
fn an_upload_is_stored_under_its_hash_and_uploading_it_again_is_the_same() {
    let node = Node::start();
    let client = node.client();
    let content: Vec<u8> = (0..300_000u32).flat_map(|i| i.to_le_bytes()).collect();
    let id = client.put_blob(&content).expect("uploaded");
    assert_eq!(id.as_str(), id_of(&content));
    assert_eq!(
        std::fs::read(node.layout.blobs_in().join(id.as_str())).unwrap(),
        content
    );
    assert_eq!(client.put_blob(&content).expect("again"), id);
    assert_eq!(files(&node.layout.blobs_in()), vec![id.to_string()]);
}

#[test]
fn a_wrong_name_a_bad_name_or_an_oversized_upload_is_a_typed_4xx_and_leaves_nothing() {
    let node = Node::start_with(api::Limits {
        max_blob_bytes: 1000,
        ..api::Limits::default()
    });
    let client = node.client();
    let octets = [("Content-Type", "application/octet-stream")];

    let other = id_of(b"another content");
    let resp = client
        .request(
            "PUT",
            &format!("/v1/blobs/{other}"),
            Some(b"content"),
            &octets,
        )
        .unwrap();
    assert_eq!(
        error_of(&resp),
        (400, "blob_mismatch".into(), "blob".into())
    );

    for bad in [
        "abc",
        &other.to_uppercase(),
        &format!("{other}0"),
        "..%2f..%2fetc",
    ] {
        let resp = client
            .request("PUT", &format!("/v1/blobs/{bad}"), Some(b"x"), &octets)
            .unwrap();
        assert!(
            resp.status == 400 || resp.status == 404,
            "{bad}: {}",
            resp.status
        );
        if resp.status == 400 {
            assert_eq!(error_of(&resp).1, "invalid_blob_id", "{bad}");
        }
    }

    let big = vec![7u8; 5000];
    let resp = client
        .request(
            "PUT",
            &format!("/v1/blobs/{}", id_of(&big)),
            Some(&big),
            &octets,
        )
        .unwrap();
    assert_eq!(error_of(&resp), (413, "body_too_large".into(), "".into()));
    // Not declared, sent big: refused by the stream, not by the header.
    let mut chunked = format!("{:x}\r\n", big.len()).into_bytes();
    chunked.extend_from_slice(&big);
    chunked.extend_from_slice(b"\r\n0\r\n\r\n");
    let resp = client
        .request(
            "PUT",
            &format!("/v1/blobs/{}", id_of(&big)),
            Some(&chunked),
            &[
                ("Content-Type", "application/octet-stream"),
                ("Transfer-Encoding", "chunked"),
            ],
        )
        .unwrap_or_else(|e| panic!("an answer: {e}"));
    assert_eq!(error_of(&resp), (413, "body_too_large".into(), "".into()));

    assert!(
        files(&node.layout.blobs_in()).is_empty(),
        "nothing is left: {:?}",
        files(&node.layout.blobs_in())
    );
}

#[test]
fn a_produced_blob_downloads_byte_for_byte_and_a_missing_one_is_404() {
    let node = Node::start();
    let client = node.client();
    let content = b"an account's archive".repeat(10_000);
    let (id, _) = store::blobs::write_outgoing(&node.layout, &mut &content[..]).unwrap();
    assert_eq!(client.get_blob(&id).expect("downloaded"), content);

    let missing: BlobId = id_of(b"never produced").parse().unwrap();
    match client.get_blob(&missing) {
        Err(ClientError::Api { status, code, .. }) => {
            assert_eq!((status, code.as_str()), (404, "blob_not_found"));
        }
        other => panic!("expected a 404, got {other:?}"),
    }
    // An upload is not downloadable: only what root produced is.
    let uploaded = client.put_blob(b"uploaded").unwrap();
    assert!(client.get_blob(&uploaded).is_err());
    // Without the key, neither way.
    let anonymous = node.client_with(None, &node.pin);
    assert_eq!(
        anonymous
            .request("GET", &format!("/v1/blobs/{id}"), None, &[])
            .unwrap()
            .status,
        401
    );
    assert_eq!(
        anonymous
            .request(
                "PUT",
                &format!("/v1/blobs/{}", id_of(b"x")),
                Some(b"x"),
                &[]
            )
            .unwrap()
            .status,
        401
    );
}
