//! The `scheduled_task` family's declarations: a tenant's cron jobs, each a validated
//! schedule and one of two typed kinds (a PHP script beneath the home, or a URL to fetch).
//!
//! What a client needs and nothing that touches the OS; the handlers are `ops::scheduled_task`.

use registry::types::{CronSchedule, PhpScriptTask, PhpVersion, Presence, TaskKind};
use registry::{Family, Hex32, Module, Operation, Owner, Resource, Scope};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub struct ScheduledTask;

impl Family for ScheduledTask {
    const NAME: &'static str = "scheduled_task";
    const MODULE: Module = Module::Core;
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

impl Resource for EnsureScheduledTaskRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.account.clone())
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemoveScheduledTaskRequest {
    pub id: Hex32,
    pub account: Hex32,
}

impl Resource for RemoveScheduledTaskRequest {
    fn resource_id(&self) -> &Hex32 {
        &self.id
    }
    fn owner(&self) -> Owner {
        Owner::Tenant(self.account.clone())
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScheduledTaskResult {
    pub state: Presence,
    /// The crontab line as installed (absent once removed).
    pub line: Option<String>,
    /// How many tasks the account's crontab holds now.
    pub tasks_in_crontab: u64,
}

pub struct EnsureScheduledTask;

impl Operation for EnsureScheduledTask {
    const NAME: &'static str = "ensure_scheduled_task";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str =
        "Run a PHP script of the account or fetch a URL on a cron schedule, as the account's user";
    type Family = ScheduledTask;
    type Request = EnsureScheduledTaskRequest;
    type Result = ScheduledTaskResult;

    fn example() -> EnsureScheduledTaskRequest {
        EnsureScheduledTaskRequest {
            id: "b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7"
                .parse()
                .expect("valid example"),
            account: "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
                .parse()
                .expect("valid example"),
            schedule: "*/15 * * * *".parse().expect("valid example"),
            task: TaskKind::PhpScript(PhpScriptTask {
                path: "web/shop.example.com/public_html/cron.php"
                    .parse()
                    .expect("valid example"),
                php_version: PhpVersion::V8_2,
            }),
        }
    }
}

pub struct RemoveScheduledTask;

impl Operation for RemoveScheduledTask {
    const NAME: &'static str = "remove_scheduled_task";
    const SCOPE: Scope = Scope::Tenant;
    const SUMMARY: &'static str = "Remove a scheduled task from the account's crontab";
    type Family = ScheduledTask;
    type Request = RemoveScheduledTaskRequest;
    type Result = ScheduledTaskResult;

    fn example() -> RemoveScheduledTaskRequest {
        RemoveScheduledTaskRequest {
            id: "b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7b7"
                .parse()
                .expect("valid example"),
            account: "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1"
                .parse()
                .expect("valid example"),
        }
    }
}
