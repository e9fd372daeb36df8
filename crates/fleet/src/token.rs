//! Join tokens, in the shape k3s uses: the broker's CA hash first, then the credential, so a
//! joining node authenticates the broker before it sends anything.
//!
//! `L1<sha256 of the fleet CA's DER, 64 hex>::<token id>.<secret>.<join password>@<broker>[,<broker>...]`
//!
//! The token id names the token's record in `fleet_tokens` (the node it admits, its expiry, the
//! hash of its secret); the join password lets the joining client onto the broker as the
//! `join` user, which may only send a join request. A token is good once.

use std::fmt;

use sha2::{Digest, Sha256};

const PREFIX: &str = "L1";

#[derive(Clone, PartialEq, Eq)]
pub struct JoinToken {
    pub ca_sha256: String,
    pub id: String,
    pub secret: String,
    pub join_password: String,
    pub brokers: Vec<String>,
}

impl fmt::Debug for JoinToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinToken")
            .field("ca_sha256", &self.ca_sha256)
            .field("id", &self.id)
            .field("brokers", &self.brokers)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("not a join token: {0}")]
pub struct TokenError(&'static str);

fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

impl JoinToken {
    /// A new token for these brokers: a fresh id and secret.
    pub fn mint(ca_sha256: &str, join_password: &str, brokers: Vec<String>) -> JoinToken {
        JoinToken {
            ca_sha256: ca_sha256.to_owned(),
            id: random_hex(8),
            secret: random_hex(32),
            join_password: join_password.to_owned(),
            brokers,
        }
    }

    pub fn parse(text: &str) -> Result<JoinToken, TokenError> {
        let rest = text
            .trim()
            .strip_prefix(PREFIX)
            .ok_or(TokenError("it does not start with L1"))?;
        let (ca, rest) = rest
            .split_once("::")
            .ok_or(TokenError("no '::' after the CA hash"))?;
        if !is_hex(ca, 64) {
            return Err(TokenError("the CA hash is not 64 lowercase hex digits"));
        }
        let (credential, brokers) = rest
            .split_once('@')
            .ok_or(TokenError("no '@' before the brokers"))?;
        let mut parts = credential.splitn(3, '.');
        let (Some(id), Some(secret), Some(password)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(TokenError("the credential is not id.secret.password"));
        };
        if !is_hex(id, 16) || !is_hex(secret, 64) || !is_hex(password, 64) {
            return Err(TokenError(
                "the credential's parts are not hex of the right length",
            ));
        }
        let brokers: Vec<String> = brokers.split(',').map(str::to_owned).collect();
        if brokers
            .iter()
            .any(|b| b.is_empty() || b.contains(char::is_whitespace))
        {
            return Err(TokenError("an empty or spaced broker address"));
        }
        Ok(JoinToken {
            ca_sha256: ca.to_owned(),
            id: id.to_owned(),
            secret: secret.to_owned(),
            join_password: password.to_owned(),
            brokers,
        })
    }

    /// The token as text, to hand to the joining node's operator.
    pub fn encode(&self) -> String {
        format!(
            "{PREFIX}{}::{}.{}.{}@{}",
            self.ca_sha256,
            self.id,
            self.secret,
            self.join_password,
            self.brokers.join(",")
        )
    }
}

/// `n` random bytes in lowercase hex.
pub fn random_hex(n: usize) -> String {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes).expect("the system's random source");
    hex::encode(bytes)
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_round_trips_and_bad_ones_are_refused() {
        let token = JoinToken::mint(
            &"ab".repeat(32),
            &random_hex(32),
            vec!["tls://127.0.0.1:4222".into(), "tls://10.0.0.2:4222".into()],
        );
        let text = token.encode();
        assert_eq!(JoinToken::parse(&text).unwrap(), token);
        assert!(!format!("{token:?}").contains(&token.secret));
        for bad in [
            "",
            "K10abc::x",
            &text.replacen("L1", "L2", 1),
            &text.replace("::", ":"),
            &text.replace('@', "#"),
            &text[..text.len() - 1].replace(".", ""),
        ] {
            assert!(JoinToken::parse(bad).is_err(), "{bad}");
        }
    }
}
