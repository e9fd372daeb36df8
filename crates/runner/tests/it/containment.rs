//! Failure is a result (ARCHITECTURE.md invariant 5): a failing or panicking step never stops the
//! others, and a panicking handler or an invalid result fails only its own job.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use inbox::InboxRow;
use ops::Ctx;
use provider::Platform;
use registry::types::Hex32;
use registry::{
    Apply, Derive, Derived, Family, Handlers, JobState, Module, OpError, Operation, Owner, Purge,
    Registry, Resource, Scope,
};
use runner::{PassReport, apply, steps};
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};
use state::StateDb;

struct Boom;
impl Family for Boom {
    const NAME: &'static str = "boom";
    const MODULE: Module = Module::Core;
}
impl Purge<Ctx> for Boom {
    fn purge(_: &mut Ctx, _: &Hex32) -> Result<(), OpError> {
        Ok(())
    }
}
impl Derive<Ctx> for Boom {
    fn derive(_: &Ctx) -> Result<Vec<Derived>, OpError> {
        Ok(Vec::new())
    }
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Req {
    id: Hex32,
    account: Hex32,
}
impl Resource for Req {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.account.clone())
    }
}

/// A count whose schema allows at most 1; serializing 5 makes a result its schema rejects.
#[derive(Serialize, Deserialize)]
struct AtMostOne(u32);
impl JsonSchema for AtMostOne {
    fn schema_name() -> Cow<'static, str> {
        "AtMostOne".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "integer", "maximum": 1})
    }
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Res {
    count: AtMostOne,
}

fn example() -> Req {
    Req {
        id: "0".repeat(32).parse().unwrap(),
        account: "1".repeat(32).parse().unwrap(),
    }
}

macro_rules! op {
    ($ty:ident, $name:literal, $body:expr) => {
        struct $ty;
        impl Operation for $ty {
            const NAME: &'static str = $name;
            const SCOPE: Scope = Scope::Tenant;
            const SUMMARY: &'static str = "test";
            type Family = Boom;
            type Request = Req;
            type Result = Res;
            fn example() -> Req {
                example()
            }
        }
        impl Apply<Ctx> for $ty {
            fn apply(_: &mut Ctx, _: &Req) -> Result<Res, OpError> {
                $body
            }
        }
    };
}

op!(Explode, "explode", panic!("handler bug"));
op!(
    BadResult,
    "bad_result",
    Ok(Res {
        count: AtMostOne(5)
    })
);
op!(
    Fine,
    "fine",
    Ok(Res {
        count: AtMostOne(1)
    })
);

fn setup() -> (tempfile::TempDir, Ctx, Registry, Handlers<Ctx>, Hex32) {
    let dir = tempfile::tempdir().unwrap();
    let provider = Arc::new(testkit::sim_provider(Platform::Debian, dir.path(), vec![]));
    let state = StateDb::open(&dir.path().join("state.db")).unwrap();
    let registry = Registry::builder()
        .op::<Explode>()
        .op::<BadResult>()
        .op::<Fine>()
        .build();
    registry.check().unwrap();
    let handlers = Handlers::builder()
        .op::<Explode>()
        .op::<BadResult>()
        .op::<Fine>()
        .build();
    handlers.check(&registry).unwrap();
    (
        dir,
        Ctx::new(provider, state),
        registry,
        handlers,
        "f".repeat(32).parse().unwrap(),
    )
}

fn row(seq: i64, operation: &str, id: char) -> InboxRow {
    let request_id = format!("{}", id).repeat(32);
    let body = serde_json::json!({
        "request_id": request_id,
        "operation": operation,
        "resource": {"id": format!("{id}").repeat(32), "account": "1".repeat(32)}
    })
    .to_string()
    .into_bytes();
    InboxRow {
        seq,
        request_id,
        operation: operation.into(),
        body_len: body.len() as i64,
        body,
        received_at: Some(0),
        origin: None,
    }
}

#[test]
fn a_panicking_handler_fails_only_its_job() {
    let (_dir, mut ctx, registry, handlers, node) = setup();
    let rows = [
        row(1, "explode", 'a'),
        row(2, "bad_result", 'b'),
        row(3, "fine", 'c'),
    ];
    let report = ctx.state.ingest(&registry, &node, &rows).unwrap();
    assert_eq!(report.admitted, 3);
    let applied = apply::apply_pending(
        &mut ctx,
        &registry,
        &handlers,
        &node,
        Duration::from_secs(10),
        |_| {},
    )
    .unwrap();
    assert_eq!(applied.jobs, 3);
    assert!(
        !applied.stopped_at_budget,
        "all three ran within the budget"
    );
    let job = |c: char| ctx.state.job(&c.to_string().repeat(32)).unwrap().unwrap();
    let exploded = job('a');
    assert_eq!(exploded.state, JobState::Failed);
    assert_eq!(exploded.error.unwrap().code, "handler_panicked");
    let bad = job('b');
    assert_eq!(bad.state, JobState::Failed);
    assert_eq!(bad.error.unwrap().code, "invalid_result");
    let fine = job('c');
    assert_eq!(fine.state, JobState::Succeeded, "{fine:?}");
    assert_eq!(fine.resource_id.as_deref(), Some("c".repeat(32).as_str()));
}

#[test]
fn a_failing_step_does_not_stop_the_others() {
    let (_dir, mut ctx, _registry, _handlers, _node) = setup();
    let mut report = PassReport::default();
    let mut ran_last = false;
    steps::contain(&mut ctx, &mut report, "fails", |_| {
        anyhow::bail!("disk on fire")
    });
    steps::contain(&mut ctx, &mut report, "panics", |_| panic!("step bug"));
    steps::contain(&mut ctx, &mut report, "works", |_| {
        ran_last = true;
        Ok(())
    });
    assert!(ran_last, "the step after two failures did not run");
    assert_eq!(report.failed_steps, ["fails", "panics"]);
    let recorded = ctx.state.step_failures(10).unwrap();
    let names: Vec<&str> = recorded.iter().map(|(s, _, _)| s.as_str()).collect();
    assert_eq!(names, ["panics", "fails"]);
    assert!(recorded[0].2.contains("step bug") && recorded[1].2.contains("disk on fire"));
}
