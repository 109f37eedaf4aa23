//! Where AWS credentials and the region come from, in the order the AWS CLI and SDKs look:
//!
//! 1. `AWS_ACCESS_KEY_ID` + `AWS_SECRET_ACCESS_KEY` (+ `AWS_SESSION_TOKEN`) in the environment;
//! 2. the profile (`profile` in the provider's block, else `AWS_PROFILE`, else `default`) in
//!    the shared credentials file (`AWS_SHARED_CREDENTIALS_FILE`, default `~/.aws/credentials`,
//!    `[NAME]`) and the config file (`AWS_CONFIG_FILE`, default `~/.aws/config`, `[profile
//!    NAME]` or `[default]`): static keys, or a `credential_process` whose JSON output carries
//!    them (how SSO profiles are used: `aws configure export-credentials --profile NAME
//!    --format process`);
//! 3. an SSO profile (`sso_session` or `sso_start_url`): the token `aws sso login` cached in
//!    `~/.aws/sso/cache`, exchanged at the SSO portal for the role's temporary keys
//!    ([`super::sso`]); an expired token is an error that says to run `aws sso login`.
//!
//! Region: the provider's `region`, else `AWS_REGION`, `AWS_DEFAULT_REGION`, else the profile's
//! `region`. The environment is the snapshot taken when the model was resolved ([`AwsEnv`]),
//! never the live process environment.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::sigv4::Credentials;

/// The variables AWS credentials and settings are read from.
pub const AWS_VARS: [&str; 12] = [
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_PROFILE",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_CONFIG_FILE",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_ENDPOINT_URL_SSO",
    "AWS_ENDPOINT_URL_BEDROCK",
    "HOME",
];

/// A snapshot of [`AWS_VARS`]. `Debug` shows names only.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct AwsEnv {
    vars: BTreeMap<String, String>,
}

impl std::fmt::Debug for AwsEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.vars.keys()).finish()
    }
}

impl AwsEnv {
    /// The snapshot of these (name, value) pairs; empty values count as unset.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        Self {
            vars: pairs
                .into_iter()
                .filter(|(_, v)| !v.trim().is_empty())
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    /// A variable's value.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }

    /// Every secret value in it (for the redactor).
    pub fn secrets(&self) -> Vec<String> {
        [
            "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN",
            "AWS_BEARER_TOKEN_BEDROCK",
        ]
        .iter()
        .filter_map(|name| self.get(name).map(str::to_string))
        .collect()
    }

    fn home_file(&self, var: &str, rel: &str) -> Option<PathBuf> {
        match self.get(var) {
            Some(path) => Some(PathBuf::from(path)),
            None => self.get("HOME").map(|home| PathBuf::from(home).join(rel)),
        }
    }
}

/// Settings from the provider's block that steer the lookup.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lookup {
    /// `profile`.
    pub profile: Option<String>,
    /// `region`.
    pub region: Option<String>,
}

/// What could not be found, worded for the user.
pub type Missing = String;

/// The INI sections of a file: `section -> key -> value` (keys lowercased).
fn parse_ini(text: &str) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            let name = name.split_whitespace().collect::<Vec<_>>().join(" ");
            out.entry(name.clone()).or_default();
            current = Some(name);
            continue;
        }
        if let (Some(section), Some((key, value))) = (&current, line.split_once('=')) {
            out.entry(section.clone())
                .or_default()
                .insert(key.trim().to_ascii_lowercase(), value.trim().to_string());
        }
    }
    out
}

/// The sections of an AWS file (at most its first MiB; a missing file has none).
fn read_ini(path: Option<PathBuf>) -> BTreeMap<String, BTreeMap<String, String>> {
    use std::io::Read;
    let mut text = String::new();
    let read = path
        .and_then(|p| std::fs::File::open(p).ok())
        .and_then(|file| file.take(1024 * 1024).read_to_string(&mut text).ok());
    match read {
        Some(_) => parse_ini(&text),
        None => BTreeMap::new(),
    }
}

/// The profile in effect.
pub fn profile_name(env: &AwsEnv, lookup: &Lookup) -> String {
    lookup
        .profile
        .clone()
        .or_else(|| env.get("AWS_PROFILE").map(str::to_string))
        .unwrap_or_else(|| "default".to_string())
}

/// The config file's section of `profile`.
fn config_section(env: &AwsEnv, profile: &str) -> BTreeMap<String, String> {
    section_of(
        &read_ini(env.home_file("AWS_CONFIG_FILE", ".aws/config")),
        profile,
    )
}

/// `profile`'s section of the parsed config file.
fn section_of(
    config: &BTreeMap<String, BTreeMap<String, String>>,
    profile: &str,
) -> BTreeMap<String, String> {
    let name = if profile == "default" {
        "default".to_string()
    } else {
        format!("profile {profile}")
    };
    config
        .get(&name)
        .or_else(|| config.get(profile))
        .cloned()
        .unwrap_or_default()
}

/// The region in effect, or what to set.
pub fn region(env: &AwsEnv, lookup: &Lookup) -> Result<String, Missing> {
    if let Some(region) = lookup
        .region
        .as_deref()
        .or_else(|| env.get("AWS_REGION"))
        .or_else(|| env.get("AWS_DEFAULT_REGION"))
    {
        return Ok(region.trim().to_string());
    }
    let profile = profile_name(env, lookup);
    config_section(env, &profile)
        .get("region")
        .cloned()
        .ok_or_else(|| {
            format!(
                "no AWS region: set AWS_REGION, region in [providers.bedrock], or region in profile `{profile}` of ~/.aws/config"
            )
        })
}

/// The credentials in effect, or why there are none.
pub fn credentials(env: &AwsEnv, lookup: &Lookup) -> Result<Credentials, Missing> {
    if let (Some(id), Some(secret)) = (
        env.get("AWS_ACCESS_KEY_ID"),
        env.get("AWS_SECRET_ACCESS_KEY"),
    ) {
        return Ok(Credentials {
            access_key_id: id.trim().to_string(),
            secret_access_key: secret.trim().to_string(),
            session_token: env.get("AWS_SESSION_TOKEN").map(|t| t.trim().to_string()),
            expires: None,
        });
    }
    let profile = profile_name(env, lookup);
    let shared = read_ini(env.home_file("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials"));
    let config_file = read_ini(env.home_file("AWS_CONFIG_FILE", ".aws/config"));
    let config = section_of(&config_file, &profile);
    let from_keys = |section: &BTreeMap<String, String>| {
        Some(Credentials {
            access_key_id: section.get("aws_access_key_id")?.clone(),
            secret_access_key: section.get("aws_secret_access_key")?.clone(),
            session_token: section.get("aws_session_token").cloned(),
            expires: None,
        })
    };
    if let Some(found) = shared.get(&profile).and_then(from_keys) {
        return Ok(found);
    }
    if let Some(found) = from_keys(&config) {
        return Ok(found);
    }
    if let Some(command) = config.get("credential_process") {
        return credential_process(command);
    }
    if let Some(sso) = super::sso::profile(env, &profile, &config, &config_file) {
        return sso?.role_credentials(env);
    }
    Err(format!(
        "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE (profile `{profile}` has no keys in ~/.aws/credentials or ~/.aws/config)"
    ))
}

/// Where the credentials would come from, for `versus models`: found without running a
/// `credential_process` or asking the SSO portal (`Ok`: the source, `Err`: what to set). The
/// same order as [`credentials`], the Bedrock API key first as a model's requests use it.
pub fn describe(env: &AwsEnv, lookup: &Lookup) -> Result<String, Missing> {
    if env.get("AWS_BEARER_TOKEN_BEDROCK").is_some() {
        return Ok("AWS_BEARER_TOKEN_BEDROCK (a Bedrock API key)".to_string());
    }
    if env.get("AWS_ACCESS_KEY_ID").is_some() && env.get("AWS_SECRET_ACCESS_KEY").is_some() {
        return Ok("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY".to_string());
    }
    let profile = profile_name(env, lookup);
    let shared = read_ini(env.home_file("AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials"));
    let config = config_section(env, &profile);
    let has_keys = |section: &BTreeMap<String, String>| {
        section.contains_key("aws_access_key_id") && section.contains_key("aws_secret_access_key")
    };
    let how = if shared.get(&profile).is_some_and(has_keys) {
        "keys in the shared credentials file"
    } else if has_keys(&config) {
        "keys in the config file"
    } else if config.contains_key("credential_process") {
        "credential_process"
    } else if config.contains_key("sso_session") || config.contains_key("sso_start_url") {
        "AWS SSO, after `aws sso login`"
    } else {
        return Err(format!(
            "not found (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or AWS_BEARER_TOKEN_BEDROCK; profile `{profile}` has no credentials)"
        ));
    };
    Ok(format!("profile `{profile}`: {how}"))
}

/// Runs a profile's `credential_process` (`sh -c`) and reads its JSON (`Version: 1`,
/// `AccessKeyId`, `SecretAccessKey`, `SessionToken`, `Expiration`).
fn credential_process(command: &str) -> Result<Credentials, Missing> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "PascalCase")]
    struct Output {
        access_key_id: String,
        secret_access_key: String,
        session_token: Option<String>,
        expiration: Option<String>,
    }
    let output = std::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|err| format!("could not run the profile's credential_process: {err}"))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let last: String = stderr
            .trim()
            .lines()
            .last()
            .unwrap_or("")
            .chars()
            .take(300)
            .collect();
        return Err(format!(
            "the profile's credential_process failed ({}): {last}",
            output.status
        ));
    }
    let parsed: Output = serde_json::from_slice(&output.stdout).map_err(|err| {
        format!("the profile's credential_process printed no credentials ({err})")
    })?;
    Ok(Credentials {
        access_key_id: parsed.access_key_id,
        secret_access_key: parsed.secret_access_key,
        session_token: parsed.session_token,
        expires: parsed.expiration.as_deref().and_then(parse_rfc3339),
    })
}

/// `2026-11-28T01:02:03Z` (fractions and offsets other than `Z` are not used by AWS here;
/// the `UTC` suffix older AWS CLIs wrote in SSO caches is read as `Z`).
pub(super) fn parse_rfc3339(text: &str) -> Option<SystemTime> {
    let text = text.trim().trim_end_matches("UTC").trim_end_matches('Z');
    let (date, time) = text.split_once('T')?;
    let mut d = date.split('-').map(|p| p.parse::<i64>().ok());
    let (year, month, day) = (d.next()??, d.next()??, d.next()??);
    let time = time.split(['.', '+']).next()?;
    let mut t = time.split(':').map(|p| p.parse::<i64>().ok());
    let (h, m, s) = (t.next()??, t.next()??, t.next()??);
    let (y, mo) = if month <= 2 {
        (year - 1, month + 9)
    } else {
        (year, month - 3)
    };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * mo + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = u64::try_from(days * 86_400 + h * 3600 + m * 60 + s).ok()?;
    Some(UNIX_EPOCH + Duration::from_secs(secs))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn environment_then_profiles_then_processes() {
        let dir = tempfile::tempdir().unwrap();
        let creds = dir.path().join("credentials");
        let config = dir.path().join("config");
        std::fs::write(
            &creds,
            "[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = s1\n\n[work]\naws_access_key_id=AKIDWORK\naws_secret_access_key=s2\naws_session_token=t2\n",
        )
        .unwrap();
        std::fs::write(
            &config,
            "[default]\nregion = eu-west-1\n[profile proc]\nregion = us-west-2\ncredential_process = printf '{\"Version\":1,\"AccessKeyId\":\"AKIDPROC\",\"SecretAccessKey\":\"s3\",\"SessionToken\":\"t3\",\"Expiration\":\"2030-01-01T00:00:00Z\"}'\n[profile sso]\nsso_session = corp\n",
        )
        .unwrap();
        let files = [
            ("AWS_SHARED_CREDENTIALS_FILE", creds.to_str().unwrap()),
            ("AWS_CONFIG_FILE", config.to_str().unwrap()),
        ];
        let env = AwsEnv::from_pairs(files);
        let none = Lookup::default();
        assert_eq!(
            credentials(&env, &none).unwrap().access_key_id,
            "AKIDDEFAULT"
        );
        assert_eq!(region(&env, &none).unwrap(), "eu-west-1");

        let mut with_env = files.to_vec();
        with_env.extend([
            ("AWS_ACCESS_KEY_ID", "AKIDENV"),
            ("AWS_SECRET_ACCESS_KEY", "s0"),
            ("AWS_REGION", "ap-south-1"),
        ]);
        let env2 = AwsEnv::from_pairs(with_env);
        assert_eq!(credentials(&env2, &none).unwrap().access_key_id, "AKIDENV");
        assert_eq!(region(&env2, &none).unwrap(), "ap-south-1");

        let mut with_profile = files.to_vec();
        with_profile.push(("AWS_PROFILE", "work"));
        let env3 = AwsEnv::from_pairs(with_profile);
        let work = credentials(&env3, &none).unwrap();
        assert_eq!(
            (work.access_key_id.as_str(), work.session_token.as_deref()),
            ("AKIDWORK", Some("t2"))
        );

        let proc = Lookup {
            profile: Some("proc".into()),
            region: None,
        };
        let from_process = credentials(&env, &proc).unwrap();
        assert_eq!(from_process.access_key_id, "AKIDPROC");
        assert_eq!(
            from_process.expires,
            Some(UNIX_EPOCH + Duration::from_secs(1_893_456_000))
        );
        assert_eq!(region(&env, &proc).unwrap(), "us-west-2");

        let sso = Lookup {
            profile: Some("sso".into()),
            region: None,
        };
        let err = credentials(&env, &sso).unwrap_err();
        assert!(err.contains("[sso-session corp]"), "{err}");
        assert_eq!(
            describe(&env, &none).unwrap(),
            "profile `default`: keys in the shared credentials file"
        );
        assert_eq!(
            describe(&env, &proc).unwrap(),
            "profile `proc`: credential_process"
        );
        assert_eq!(
            describe(&env, &sso).unwrap(),
            "profile `sso`: AWS SSO, after `aws sso login`"
        );
        assert!(
            describe(&env2, &none)
                .unwrap()
                .starts_with("AWS_ACCESS_KEY_ID")
        );
        assert!(
            describe(&AwsEnv::default(), &none)
                .unwrap_err()
                .starts_with("not found")
        );
        let err = credentials(&AwsEnv::default(), &none).unwrap_err();
        assert!(err.contains("AWS_ACCESS_KEY_ID"), "{err}");
        assert!(!format!("{env2:?}").contains("s0"));
    }
}
