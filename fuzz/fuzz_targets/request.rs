//! Every operation's request type: the first byte picks the operation from the registry (so
//! an operation added later is fuzzed too), the rest is its resource as JSON. Properties: it
//! never panics; an accepted resource is an object whose canonical form parses again to the
//! same id, owner and canonical form, and fits in the envelope's size bound.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let ops: Vec<_> = declarations::registry().operations().collect();
    let op = ops[usize::from(pick) % ops.len()];
    let Ok(resource) = serde_json::from_slice::<serde_json::Value>(rest) else {
        return;
    };
    if let Ok(parsed) = op.parse(resource) {
        assert!(parsed.canonical.is_object());
        let again = op
            .parse(parsed.canonical.clone())
            .expect("a canonical resource parses again");
        assert_eq!(parsed.resource_id, again.resource_id);
        assert_eq!(parsed.owner, again.owner);
        assert_eq!(parsed.canonical, again.canonical);
    }
});
