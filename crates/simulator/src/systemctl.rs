//! Model of `systemctl show --property=LoadState,ActiveState -- UNIT`, answering from the
//! sandbox: `/var/lib/layerone-sim/units/UNIT` holds the unit's ActiveState (`active`,
//! `failed`...); no file is a unit systemd does not know (`LoadState=not-found`,
//! `ActiveState=inactive`, exit 0, as systemd answers). Other verbs are not modelled.

use provider::Provider;

use super::Outcome;

/// Where the Sim keeps each unit's state.
pub const SIM_UNITS_DIR: &str = "/var/lib/layerone-sim/units";

pub(crate) fn systemctl(provider: &Provider, args: &[String]) -> Outcome {
    let [verb, property, dashes, unit] = args else {
        return Outcome::fail(
            127,
            format!("layerone sim: systemctl {args:?} is not modelled\n"),
        );
    };
    if verb != "show" || property != "--property=LoadState,ActiveState" || dashes != "--" {
        return Outcome::fail(
            127,
            format!("layerone sim: systemctl {args:?} is not modelled\n"),
        );
    }
    if unit.contains('/') || unit.starts_with('.') {
        return Outcome::fail(1, format!("Invalid unit name \"{unit}\"\n"));
    }
    let file = provider.sysconf(SIM_UNITS_DIR).join(unit);
    let stdout = match std::fs::read_to_string(file) {
        Ok(state) => format!("LoadState=loaded\nActiveState={}\n", state.trim()),
        Err(_) => "LoadState=not-found\nActiveState=inactive\n".to_owned(),
    };
    Outcome {
        status: 0,
        stdout,
        stderr: String::new(),
    }
}
