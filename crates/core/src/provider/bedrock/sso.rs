//! AWS IAM Identity Center (SSO) profiles: the role credentials of a profile that signs in
//! with `aws sso login`, read the way the AWS CLI and SDKs read them.
//!
//! `aws sso login --profile NAME` leaves an access token in `~/.aws/sso/cache/<sha1>.json`,
//! the file named by the SHA-1 (lowercase hex) of the profile's `sso_session` name, or of its
//! `sso_start_url` for the older form without an `[sso-session NAME]` section. With that token
//! the SSO portal's `GetRoleCredentials` (`GET https://portal.sso.{sso_region}.amazonaws.com
//! /federation/credentials?account_id=..&role_name=..`, header `x-amz-sso_bearer_token`)
//! gives temporary keys for the profile's `sso_account_id` and `sso_role_name`; the caller
//! keeps them until they expire. An expired or missing token, or one the portal refuses, is an
//! error that says to run `aws sso login --profile NAME` (versus never opens a browser).
//! `AWS_ENDPOINT_URL_SSO` (the SDKs' own override variable) points the portal elsewhere.
//!
//! The token never leaves this module in a text: errors name the cache file, not its content.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::credentials::{AwsEnv, Missing, parse_rfc3339};
use super::sigv4::Credentials;
use crate::provider::http::percent_encode;

/// The variable that points the SSO portal elsewhere (tests, proxies).
pub const ENDPOINT_VAR: &str = "AWS_ENDPOINT_URL_SSO";

/// The most of a cache file or portal answer read.
const CAP: u64 = 1 << 20;

/// How long the portal has to answer.
const TIMEOUT: Duration = Duration::from_secs(30);

/// What an SSO profile says: whose role to assume, where, and which cached token to use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SsoProfile {
    /// The profile's name (for the `aws sso login --profile` hint).
    pub profile: String,
    /// `sso_account_id`.
    pub account_id: String,
    /// `sso_role_name`.
    pub role_name: String,
    /// `sso_region`: where the portal is.
    pub region: String,
    /// The token cache file.
    pub cache_file: PathBuf,
}

/// The lowercase hex SHA-1 of `text`: the name the AWS tools give a token cache file.
pub fn cache_key(text: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY, text.as_bytes());
    super::sigv4::hex(digest.as_ref())
}

/// The SSO settings of `profile`'s config `section` (`sso_session` with its `[sso-session
/// NAME]` section in `config`, or the older `sso_start_url` + `sso_region` in the profile);
/// `None` when the profile is not an SSO profile.
pub fn profile(
    env: &AwsEnv,
    profile: &str,
    section: &BTreeMap<String, String>,
    config: &BTreeMap<String, BTreeMap<String, String>>,
) -> Option<Result<SsoProfile, Missing>> {
    let session = section.get("sso_session");
    if session.is_none() && !section.contains_key("sso_start_url") {
        return None;
    }
    Some(sso_profile(env, profile, section, session, config))
}

fn sso_profile(
    env: &AwsEnv,
    profile: &str,
    section: &BTreeMap<String, String>,
    session: Option<&String>,
    config: &BTreeMap<String, BTreeMap<String, String>>,
) -> Result<SsoProfile, Missing> {
    let missing = |key: &str| {
        format!(
            "profile `{profile}` signs in with AWS SSO but has no `{key}` in ~/.aws/config (see `aws configure sso --profile {profile}`)"
        )
    };
    let (key, region) = match session {
        Some(name) => {
            let block = config
                .get(&format!("sso-session {name}"))
                .ok_or_else(|| {
                    format!(
                        "profile `{profile}` names sso_session `{name}`, but ~/.aws/config has no [sso-session {name}] section"
                    )
                })?;
            let region = block
                .get("sso_region")
                .or_else(|| section.get("sso_region"))
                .ok_or_else(|| missing("sso_region"))?;
            (cache_key(name), region.clone())
        }
        None => {
            let url = section
                .get("sso_start_url")
                .ok_or_else(|| missing("sso_start_url"))?;
            let region = section
                .get("sso_region")
                .ok_or_else(|| missing("sso_region"))?;
            (cache_key(url), region.clone())
        }
    };
    let home = env.get("HOME").ok_or_else(|| {
        format!("profile `{profile}` signs in with AWS SSO, but HOME is not set, so its token cache (~/.aws/sso/cache) cannot be found")
    })?;
    Ok(SsoProfile {
        profile: profile.to_string(),
        account_id: section
            .get("sso_account_id")
            .ok_or_else(|| missing("sso_account_id"))?
            .clone(),
        role_name: section
            .get("sso_role_name")
            .ok_or_else(|| missing("sso_role_name"))?
            .clone(),
        region: region.trim().to_string(),
        cache_file: PathBuf::from(home)
            .join(".aws/sso/cache")
            .join(format!("{key}.json")),
    })
}

impl SsoProfile {
    fn login_hint(&self) -> String {
        format!("run `aws sso login --profile {}`", self.profile)
    }

    /// The cached access token, if it is still valid at `now`.
    pub fn token(&self, now: SystemTime) -> Result<String, Missing> {
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Cached {
            access_token: String,
            expires_at: String,
        }
        let bytes = crate::fsutil::read_capped(&self.cache_file, CAP).map_err(|_| {
            format!(
                "no AWS SSO sign-in for profile `{}` (no token in {}): {}",
                self.profile,
                self.cache_file.display(),
                self.login_hint()
            )
        })?;
        let cached: Cached = serde_json::from_slice(&bytes).map_err(|_| {
            format!(
                "the AWS SSO token cache {} is not readable: {}",
                self.cache_file.display(),
                self.login_hint()
            )
        })?;
        let expires = parse_rfc3339(&cached.expires_at).ok_or_else(|| {
            format!(
                "the AWS SSO token in {} has no readable expiry: {}",
                self.cache_file.display(),
                self.login_hint()
            )
        })?;
        if expires <= now {
            return Err(format!(
                "the AWS SSO sign-in of profile `{}` has expired: {}",
                self.profile,
                self.login_hint()
            ));
        }
        Ok(cached.access_token)
    }

    /// The portal's `GetRoleCredentials` URL (`AWS_ENDPOINT_URL_SSO` overrides the host).
    pub fn url(&self, env: &AwsEnv) -> String {
        let base = match env.get(ENDPOINT_VAR) {
            Some(base) => base.trim().trim_end_matches('/').to_string(),
            None => format!("https://portal.sso.{}.amazonaws.com", self.region),
        };
        format!(
            "{base}/federation/credentials?account_id={}&role_name={}",
            percent_encode(&self.account_id),
            percent_encode(&self.role_name)
        )
    }

    /// Reads a `GetRoleCredentials` answer.
    fn read_answer(&self, status: u16, body: &[u8], token: &str) -> Result<Credentials, Missing> {
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Answer {
            role_credentials: Role,
        }
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Role {
            access_key_id: String,
            secret_access_key: String,
            #[serde(default)]
            session_token: Option<String>,
            /// Milliseconds since the epoch.
            #[serde(default)]
            expiration: Option<u64>,
        }
        let scrub = |text: &str| {
            crate::provider::redact::Redactor::new([token.to_string()])
                .scrub(&text.chars().take(300).collect::<String>())
        };
        if status == 401 || status == 403 {
            return Err(format!(
                "the AWS SSO portal refused the sign-in of profile `{}` (HTTP {status}: {}): {}",
                self.profile,
                scrub(String::from_utf8_lossy(body).trim()),
                self.login_hint()
            ));
        }
        if !(200..300).contains(&status) {
            return Err(format!(
                "the AWS SSO portal could not give the credentials of role `{}` in account {} (HTTP {status}: {})",
                self.role_name,
                self.account_id,
                scrub(String::from_utf8_lossy(body).trim())
            ));
        }
        let answer: Answer = serde_json::from_slice(body).map_err(|err| {
            format!("the AWS SSO portal's answer holds no role credentials ({err})")
        })?;
        let role = answer.role_credentials;
        Ok(Credentials {
            access_key_id: role.access_key_id,
            secret_access_key: role.secret_access_key,
            session_token: role.session_token,
            expires: role
                .expiration
                .map(|ms| UNIX_EPOCH + Duration::from_millis(ms)),
        })
    }

    /// The role's credentials: the cached token, then the portal (on a thread of its own, so
    /// this works from synchronous code inside or outside an async runtime).
    pub fn role_credentials(&self, env: &AwsEnv) -> Result<Credentials, Missing> {
        let token = self.token(SystemTime::now())?;
        let url = self.url(env);
        let (status, body) = std::thread::scope(|scope| {
            scope
                .spawn(|| get(&url, &token))
                .join()
                .unwrap_or_else(|_| Err("the AWS SSO request failed".to_string()))
        })
        .map_err(|err| {
            format!(
                "could not reach the AWS SSO portal for profile `{}`: {}",
                self.profile,
                crate::provider::redact::Redactor::new([token.clone()]).scrub(&err)
            )
        })?;
        self.read_answer(status, &body, &token)
    }
}

/// One GET with the bearer token, on a runtime of its own: `(status, body)`.
fn get(url: &str, token: &str) -> Result<(u16, Vec<u8>), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|err| err.to_string())?;
    runtime.block_on(async {
        let client = crate::provider::http::default_client().map_err(|err| err.to_string())?;
        let mut response = client
            .get(url)
            .header("x-amz-sso_bearer_token", token)
            .header("accept", "application/json")
            .timeout(TIMEOUT)
            .send()
            .await
            .map_err(|err| crate::provider::http::error_chain(&err))?;
        let status = response.status().as_u16();
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|err| crate::provider::http::error_chain(&err))?
        {
            body.extend_from_slice(&chunk);
            if body.len() as u64 > CAP {
                return Err("the answer is larger than 1 MiB".to_string());
            }
        }
        Ok((status, body))
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn section(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn cache_files_are_named_as_the_aws_tools_name_them() {
        // SHA-1 of the session name (or start URL), lowercase hex (FIPS 180 test vector).
        assert_eq!(cache_key("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
        let env = AwsEnv::from_pairs([("HOME", "/h")]);
        let mut config = BTreeMap::new();
        config.insert(
            "sso-session corp".to_string(),
            section(&[
                ("sso_start_url", "https://corp.awsapps.com/start"),
                ("sso_region", "eu-west-1"),
            ]),
        );
        let profile_section = section(&[
            ("sso_session", "corp"),
            ("sso_account_id", "111122223333"),
            ("sso_role_name", "Dev Role"),
        ]);
        let found = profile(&env, "dev", &profile_section, &config)
            .unwrap()
            .unwrap();
        assert_eq!(found.region, "eu-west-1");
        assert_eq!(
            found.cache_file,
            PathBuf::from(format!("/h/.aws/sso/cache/{}.json", cache_key("corp")))
        );
        assert_eq!(
            found.url(&env),
            "https://portal.sso.eu-west-1.amazonaws.com/federation/credentials?account_id=111122223333&role_name=Dev%20Role"
        );
        // The older form: the start URL names the file.
        let legacy = section(&[
            ("sso_start_url", "https://corp.awsapps.com/start"),
            ("sso_region", "us-east-1"),
            ("sso_account_id", "1"),
            ("sso_role_name", "r"),
        ]);
        let found = profile(&env, "old", &legacy, &config).unwrap().unwrap();
        assert!(found.cache_file.ends_with(format!(
            "{}.json",
            cache_key("https://corp.awsapps.com/start")
        )));
        // Not an SSO profile; a session that is not defined.
        assert!(profile(&env, "x", &section(&[("region", "r")]), &config).is_none());
        let err = profile(&env, "y", &section(&[("sso_session", "nope")]), &config)
            .unwrap()
            .unwrap_err();
        assert!(err.contains("[sso-session nope]"), "{err}");
    }

    #[test]
    fn an_expired_or_missing_token_says_to_sign_in_again() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.json");
        let sso = SsoProfile {
            profile: "dev".into(),
            account_id: "1".into(),
            role_name: "r".into(),
            region: "us-east-1".into(),
            cache_file: file.clone(),
        };
        let err = sso.token(SystemTime::now()).unwrap_err();
        assert!(err.contains("aws sso login --profile dev"), "{err}");
        std::fs::write(
            &file,
            r#"{"accessToken":"tok-SECRET-123","expiresAt":"2020-01-01T00:00:00Z","region":"us-east-1"}"#,
        )
        .unwrap();
        let err = sso.token(SystemTime::now()).unwrap_err();
        assert!(
            err.contains("has expired") && err.contains("aws sso login --profile dev"),
            "{err}"
        );
        assert!(!err.contains("tok-SECRET"), "{err}");
        let before = UNIX_EPOCH + Duration::from_secs(1_500_000_000);
        assert_eq!(sso.token(before).unwrap(), "tok-SECRET-123");
        let err = sso.read_answer(401, b"bad token tok-SECRET-123", "tok-SECRET-123");
        let err = err.unwrap_err();
        assert!(
            err.contains("aws sso login") && !err.contains("tok-SECRET"),
            "{err}"
        );
        let ok = sso
            .read_answer(
                200,
                br#"{"roleCredentials":{"accessKeyId":"AKID","secretAccessKey":"s","sessionToken":"t","expiration":1893456000000}}"#,
                "x",
            )
            .unwrap();
        assert_eq!(ok.access_key_id, "AKID");
        assert_eq!(
            ok.expires,
            Some(UNIX_EPOCH + Duration::from_secs(1_893_456_000))
        );
    }
}
