//! Validated field types of the fleet: a node's name as the fleet knows it, and the
//! generation of the assignment the fleet signed for it.

use super::*;

string_type!(
    /// A node's name in its fleet: a lowercase letter or digit, then up to 62 of `[a-z0-9-]`.
    /// It is a token of the broker's subjects (`fleet.req.<name>`), so it holds no `.`, `*`,
    /// `>` or whitespace.
    NodeName,
    json_schema!({"type": "string", "pattern": "^[a-z0-9][a-z0-9-]{0,62}$", "minLength": 1, "maxLength": 63}),
    |s| {
        let mut bytes = s.bytes();
        let first_ok = matches!(bytes.next(), Some(b'a'..=b'z' | b'0'..=b'9'));
        if !first_ok
            || s.len() > 63
            || !bytes.all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'-'))
        {
            return Err("expected a lowercase letter or digit then up to 62 of [a-z0-9-]".into());
        }
        Ok(s.to_owned())
    }
);

ranged_u64!(
    /// The generation of a node's assignment: the fleet raises it on every change, from 1; at
    /// most 2^53 - 1 so every JSON implementation reads it exactly.
    AssignmentGeneration,
    1,
    9_007_199_254_740_991u64
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_names_are_one_subject_token() {
        let longest = format!("a{}", "-".repeat(62));
        for good in ["web-1", "a", "0", "1-node", "mail-eu-3", longest.as_str()] {
            assert!(good.parse::<NodeName>().is_ok(), "{good}");
        }
        let too_long = "a".repeat(64);
        for bad in [
            "",
            "-web",
            "Web-1",
            "web.1",
            "web_1",
            "web*",
            "web>",
            "web 1",
            "web-1\n",
            too_long.as_str(),
        ] {
            assert!(bad.parse::<NodeName>().is_err(), "{bad:?} accepted");
        }
        assert!(serde_json::from_str::<NodeName>("\"web.1\"").is_err());
        assert_eq!(
            serde_json::to_string(&"web-1".parse::<NodeName>().unwrap()).unwrap(),
            "\"web-1\""
        );
    }

    #[test]
    fn an_assignment_generation_starts_at_one() {
        assert!(serde_json::from_str::<AssignmentGeneration>("0").is_err());
        assert_eq!(
            serde_json::from_str::<AssignmentGeneration>("1")
                .unwrap()
                .get(),
            1
        );
        assert!(serde_json::from_str::<AssignmentGeneration>("9007199254740992").is_err());
    }
}
