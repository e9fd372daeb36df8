//! Any bytes as a request body, through exactly the validation the API runs at admission and
//! root runs again on every inbox row. Properties: it never panics; what it accepts has a
//! canonical form that validates again to the same job.
#![no_main]

use libfuzzer_sys::fuzz_target;
use registry::Hex32;

fuzz_target!(|data: &[u8]| {
    let node: Hex32 = "0000000000000000000000000000feed"
        .parse()
        .expect("a valid node id");
    let _ = registry::Envelope::parse(data);
    if let Ok(job) = declarations::registry().validate(data, &node) {
        let again = declarations::registry()
            .validate(job.canonical.as_bytes(), &node)
            .expect("a canonical body validates again");
        assert_eq!(
            again.canonical, job.canonical,
            "the canonical form is stable"
        );
        assert_eq!(again.body_sha256, job.body_sha256);
        assert_eq!(again.resource_id, job.resource_id);
        assert_eq!(again.operation, job.operation);
    }
});
