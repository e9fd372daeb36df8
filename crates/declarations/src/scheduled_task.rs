//! The `scheduled_task` family's declarations: a tenant's cron jobs, each a validated
//! schedule and one of two typed kinds (a PHP script beneath the home, or a URL to fetch).
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::scheduled_task`.

use registry::Hex32;
use registry::types::{CronSchedule, PhpScriptTask, PhpVersion, Presence, TaskKind};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::account::EnsureAccount;
use crate::declare::{family, impl_resource, operation};
use crate::example;
use crate::resource::AccountResource;

family! {
    pub struct ScheduledTask {
        name: "scheduled_task",
        module: Core,
        drift: {
            /// The account has scheduled tasks recorded and no crontab in the cron spool.
            CRONTAB_MISSING = "crontab_missing",
            /// The account's crontab is not what state.db derives.
            CRONTAB_DIFFERS = "crontab_differs",
        },
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnsureScheduledTaskRequest {
    pub id: Hex32,
    pub account: Hex32,
    /// Five cron fields or an `@daily`-style macro, in the server's time zone.
    pub schedule: CronSchedule,
    pub task: TaskKind,
}

impl_resource!(owner = account: EnsureScheduledTaskRequest);

pub type RemoveScheduledTaskRequest = AccountResource;

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScheduledTaskResult {
    pub state: Presence,
    /// The crontab line as installed (absent once removed).
    pub line: Option<String>,
    /// How many tasks the account's crontab holds now.
    pub tasks_in_crontab: u64,
}

/// The example task's id byte.
const TASK: u8 = 0xb7;

operation! {
    pub struct EnsureScheduledTask {
        name: "ensure_scheduled_task",
        kind: Declare,
        family: ScheduledTask,
        summary: "Run a PHP script of the account or fetch a URL on a cron schedule, as the account's user",
        request: EnsureScheduledTaskRequest,
        result: ScheduledTaskResult,
        needs: [EnsureAccount],
        example: EnsureScheduledTaskRequest {
            id: example::id(TASK),
            account: example::account(),
            schedule: example::parse("*/15 * * * *"),
            task: TaskKind::PhpScript(PhpScriptTask {
                path: example::parse("web/shop.example.com/public_html/cron.php"),
                php_version: PhpVersion::V8_2,
            }),
        },
    }
}

operation! {
    pub struct RemoveScheduledTask {
        name: "remove_scheduled_task",
        kind: Remove,
        family: ScheduledTask,
        summary: "Remove a scheduled task from the account's crontab",
        request: RemoveScheduledTaskRequest,
        result: ScheduledTaskResult,
        example: AccountResource::example(TASK),
    }
}
