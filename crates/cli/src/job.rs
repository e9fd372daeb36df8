//! `layerone job submit|show|wait`: jobs against a node over HTTPS with a pinned certificate.

use std::io::Read as _;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, Subcommand};
use client::{DevInfo, NodeClient};

#[derive(Args, Debug)]
pub(crate) struct Target {
    /// The node's API URL, such as https://127.0.0.1:8443.
    #[arg(long, requires_all = ["key", "pin"])]
    url: Option<String>,
    /// The API key.
    #[arg(long)]
    key: Option<String>,
    /// The node's pin: `spki-sha256:<hex>` (its key's, as `layerone install` and `layerone
    /// status` print it), or the hex SHA-256 of its certificate (the older form).
    #[arg(long)]
    pin: Option<String>,
    /// Without --url: read URL, key and pin from a dev node's dev.json.
    #[arg(long, default_value = ".layerone-dev/dev.json")]
    dev: PathBuf,
}

impl Target {
    pub(crate) fn connect(&self) -> anyhow::Result<NodeClient> {
        let (url, key, pin) = match (&self.url, &self.key, &self.pin) {
            (Some(url), Some(key), Some(pin)) => (url.clone(), key.clone(), pin.clone()),
            _ => {
                let dev = DevInfo::load(&self.dev)
                    .with_context(|| format!("no --url/--key/--pin given and {} is unreadable (is `layerone-dev` running?)", self.dev.display()))?;
                (dev.url.clone(), dev.api_key.clone(), dev.pin().to_owned())
            }
        };
        Ok(NodeClient::new(&url, Some(key), &pin)?)
    }
}

#[derive(Subcommand, Debug)]
pub enum JobCommand {
    /// Submit a job. The envelope is JSON: an argument, `-` for stdin, or --file. A missing
    /// request_id is generated.
    Submit {
        #[command(flatten)]
        target: Target,
        /// The envelope, e.g. '{"operation":"ensure_account","resource":{...}}'.
        envelope: Option<String>,
        #[arg(long, conflicts_with = "envelope")]
        file: Option<PathBuf>,
        /// Wait until the job reaches a terminal state and print that.
        #[arg(long)]
        wait: bool,
        /// With --wait: give up after this many seconds.
        #[arg(long, default_value_t = 60)]
        timeout: u64,
    },
    /// Show one job.
    Show {
        #[command(flatten)]
        target: Target,
        request_id: String,
    },
    /// Wait until a job succeeds, fails or is superseded.
    Wait {
        #[command(flatten)]
        target: Target,
        request_id: String,
        #[arg(long, default_value_t = 60)]
        timeout: u64,
    },
}

pub fn run(cmd: JobCommand) -> anyhow::Result<()> {
    match cmd {
        JobCommand::Submit {
            target,
            envelope,
            file,
            wait,
            timeout,
        } => {
            let text = match (envelope.as_deref(), file) {
                (_, Some(path)) => std::fs::read_to_string(&path)
                    .with_context(|| format!("read {}", path.display()))?,
                (Some("-") | None, None) => {
                    let mut s = String::new();
                    std::io::stdin().read_to_string(&mut s)?;
                    s
                }
                (Some(text), None) => text.to_owned(),
            };
            let mut body: serde_json::Value =
                serde_json::from_str(&text).context("the envelope is not JSON")?;
            if let Some(map) = body.as_object_mut()
                && !map.contains_key("request_id")
            {
                let mut bytes = [0u8; 16];
                getrandom::fill(&mut bytes)?;
                map.insert("request_id".into(), hex::encode(bytes).into());
            }
            let client = target.connect()?;
            let mut job = client.submit(&body)?;
            if wait {
                job = client.wait(&job.request_id, Duration::from_secs(timeout))?;
            }
            println!("{}", serde_json::to_string_pretty(&job)?);
        }
        JobCommand::Show { target, request_id } => {
            println!(
                "{}",
                serde_json::to_string_pretty(&target.connect()?.job(&request_id)?)?
            );
        }
        JobCommand::Wait {
            target,
            request_id,
            timeout,
        } => {
            let job = target
                .connect()?
                .wait(&request_id, Duration::from_secs(timeout))?;
            println!("{}", serde_json::to_string_pretty(&job)?);
        }
    }
    Ok(())
}
