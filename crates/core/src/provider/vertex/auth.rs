//! Google credentials for Vertex AI: a service-account JSON (a JWT signed RS256 with its
//! private key, exchanged at its `token_uri`) or the `authorized_user` form that
//! `gcloud auth application-default login` writes (its refresh token exchanged at the same
//! kind of endpoint); the access token cached and fetched again shortly before it expires.
//!
//! Nothing secret leaves this module in a text: the private key, the refresh token, the client
//! secret and the access token are scrubbed from every error, and `Debug` shows none of them.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;

use crate::provider::ProviderError;
use crate::provider::redact::Redactor;

/// The OAuth scope Vertex AI needs.
pub const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";

/// Google's token endpoint, for credentials that do not name one.
pub const DEFAULT_TOKEN_URI: &str = "https://oauth2.googleapis.com/token";

/// A token is fetched again when it has less than this left (Google's libraries use a few
/// minutes too): a step that starts with a token about to expire would fail mid-stream.
pub const REFRESH_MARGIN: Duration = Duration::from_secs(5 * 60);

/// The most of a credentials file or token answer read.
const CAP: u64 = 1 << 20;

/// A clock: tests move time forward instead of sleeping.
pub type Clock = Arc<dyn Fn() -> SystemTime + Send + Sync>;

/// The system clock.
pub fn system_clock() -> Clock {
    Arc::new(SystemTime::now)
}

/// Credentials as read from their JSON file.
#[derive(Clone, Deserialize)]
#[serde(tag = "type")]
pub enum Credentials {
    /// A service account's key file.
    #[serde(rename = "service_account")]
    ServiceAccount {
        /// `client_email`: the JWT's issuer.
        client_email: String,
        /// The PKCS#8 PEM private key.
        private_key: String,
        /// The key's id (the JWT header's `kid`).
        #[serde(default)]
        private_key_id: Option<String>,
        /// Where to exchange the JWT.
        #[serde(default)]
        token_uri: Option<String>,
        /// The project the account belongs to.
        #[serde(default)]
        project_id: Option<String>,
    },
    /// `gcloud auth application-default login`'s file.
    #[serde(rename = "authorized_user")]
    AuthorizedUser {
        /// OAuth client id.
        client_id: String,
        /// OAuth client secret.
        client_secret: String,
        /// The long-lived refresh token.
        refresh_token: String,
        /// The project billed for quota.
        #[serde(default)]
        quota_project_id: Option<String>,
        /// Where to exchange the refresh token.
        #[serde(default)]
        token_uri: Option<String>,
    },
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Credentials::ServiceAccount { client_email, .. } => f
                .debug_struct("ServiceAccount")
                .field("client_email", client_email)
                .finish_non_exhaustive(),
            Credentials::AuthorizedUser { .. } => {
                f.debug_struct("AuthorizedUser").finish_non_exhaustive()
            }
        }
    }
}

impl Credentials {
    /// Reads and parses a credentials file; the error names the file, never its content.
    pub fn read(path: &Path) -> Result<Credentials, String> {
        let bytes = crate::fsutil::read_capped(path, CAP).map_err(|err| {
            format!(
                "could not read the credentials file {}: {err}",
                path.display()
            )
        })?;
        serde_json::from_slice(&bytes).map_err(|err| {
            format!(
                "the credentials file {} is not a service-account or authorized_user JSON (line {}, column {}); download a service-account key or run `gcloud auth application-default login`",
                path.display(),
                err.line(),
                err.column()
            )
        })
    }

    /// The project the credentials name, when no project is set.
    pub fn project(&self) -> Option<&str> {
        match self {
            Credentials::ServiceAccount { project_id, .. } => project_id.as_deref(),
            Credentials::AuthorizedUser {
                quota_project_id, ..
            } => quota_project_id.as_deref(),
        }
    }

    fn secrets(&self) -> Vec<String> {
        match self {
            Credentials::ServiceAccount { private_key, .. } => {
                // The PEM's lines, so a quoted piece of it is scrubbed too.
                let mut out: Vec<String> = private_key
                    .lines()
                    .filter(|l| !l.starts_with("-----"))
                    .map(str::to_string)
                    .collect();
                out.push(private_key.clone());
                out
            }
            Credentials::AuthorizedUser {
                client_secret,
                refresh_token,
                ..
            } => vec![client_secret.clone(), refresh_token.clone()],
        }
    }

    fn token_uri(&self) -> &str {
        match self {
            Credentials::ServiceAccount { token_uri, .. }
            | Credentials::AuthorizedUser { token_uri, .. } => {
                token_uri.as_deref().unwrap_or(DEFAULT_TOKEN_URI)
            }
        }
    }
}

/// Where Application Default Credentials are looked for: `GOOGLE_APPLICATION_CREDENTIALS`,
/// else gcloud's file (`$CLOUDSDK_CONFIG/application_default_credentials.json`, else
/// `~/.config/gcloud/application_default_credentials.json`). `var` reads a variable.
pub fn credentials_path(var: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(path) = var("GOOGLE_APPLICATION_CREDENTIALS") {
        return Some(PathBuf::from(path));
    }
    let dir = match var("CLOUDSDK_CONFIG") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(var("HOME")?).join(".config").join("gcloud"),
    };
    let path = dir.join("application_default_credentials.json");
    path.is_file().then_some(path)
}

/// Which credentials Vertex would use, for `versus models` and the default model: the file,
/// how it was found, and what it holds. Never a secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CredentialStatus {
    /// The file, when one was found.
    pub path: Option<PathBuf>,
    /// `GOOGLE_APPLICATION_CREDENTIALS`, or gcloud's Application Default Credentials.
    pub from: &'static str,
    /// `service account`, `authorized user (gcloud login)`, or why the file is unusable.
    pub kind: String,
    /// The project the credentials name (`project_id` / `quota_project_id`).
    pub project: Option<String>,
}

impl CredentialStatus {
    /// Whether a usable credentials file was found.
    pub fn usable(&self) -> bool {
        self.path.is_some() && !self.kind.starts_with("unusable")
    }

    /// One line for a table: `GOOGLE_APPLICATION_CREDENTIALS: service account (/path)`, or
    /// `not found (set ...)`.
    pub fn describe(&self) -> String {
        match &self.path {
            Some(path) => format!("{}: {} ({})", self.from, self.kind, path.display()),
            None => format!("not found (set {})", super::CREDENTIALS_HINT),
        }
    }
}

/// The credentials Vertex would use under `var` ([`credentials_path`]), read to say what
/// they are.
pub fn credential_status(var: impl Fn(&str) -> Option<String>) -> CredentialStatus {
    let from = if var("GOOGLE_APPLICATION_CREDENTIALS").is_some() {
        "GOOGLE_APPLICATION_CREDENTIALS"
    } else {
        "gcloud application-default credentials"
    };
    let Some(path) = credentials_path(&var) else {
        return CredentialStatus {
            path: None,
            from,
            kind: "not found".to_string(),
            project: None,
        };
    };
    let (kind, project) = match Credentials::read(&path) {
        Ok(found) => (
            match found {
                Credentials::ServiceAccount { .. } => "service account",
                Credentials::AuthorizedUser { .. } => "authorized user (gcloud login)",
            }
            .to_string(),
            found.project().map(str::to_string),
        ),
        Err(_) => ("unusable: not a credentials JSON".to_string(), None),
    };
    CredentialStatus {
        path: Some(path),
        from,
        kind,
        project,
    }
}

/// The JWT a service account signs to ask for an access token (RFC 7523): `header.claims`
/// signed RSASSA-PKCS1-v1_5 with SHA-256, each part base64url without padding.
pub fn service_account_jwt(
    client_email: &str,
    private_key_pem: &str,
    key_id: Option<&str>,
    audience: &str,
    now: SystemTime,
) -> Result<String, String> {
    let iat = now
        .duration_since(UNIX_EPOCH)
        .map_err(|_| "the clock is before 1970".to_string())?
        .as_secs();
    let mut header = serde_json::json!({"alg": "RS256", "typ": "JWT"});
    if let Some(kid) = key_id {
        header["kid"] = serde_json::Value::String(kid.to_string());
    }
    let claims = serde_json::json!({
        "iss": client_email,
        "scope": SCOPE,
        "aud": audience,
        "iat": iat,
        "exp": iat + 3600,
    });
    let signing_input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let der = pem_body(private_key_pem)
        .ok_or_else(|| "the service account's private_key is not a PEM key".to_string())?;
    let key = ring::signature::RsaKeyPair::from_pkcs8(&der)
        .map_err(|_| "the service account's private_key is not a PKCS#8 RSA key".to_string())?;
    let mut signature = vec![0; key.public().modulus_len()];
    key.sign(
        &ring::signature::RSA_PKCS1_SHA256,
        &ring::rand::SystemRandom::new(),
        signing_input.as_bytes(),
        &mut signature,
    )
    .map_err(|_| "could not sign the service account's token request".to_string())?;
    Ok(format!(
        "{signing_input}.{}",
        URL_SAFE_NO_PAD.encode(signature)
    ))
}

/// The DER bytes of a `-----BEGIN PRIVATE KEY-----` PEM block.
fn pem_body(pem: &str) -> Option<Vec<u8>> {
    let start = pem.find("-----BEGIN PRIVATE KEY-----")? + "-----BEGIN PRIVATE KEY-----".len();
    let end = pem[start..].find("-----END PRIVATE KEY-----")? + start;
    let text: String = pem[start..end]
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    base64::engine::general_purpose::STANDARD.decode(text).ok()
}

/// An access token and when it stops working.
#[derive(Clone)]
pub struct CachedToken {
    token: String,
    expires_at: SystemTime,
}

impl CachedToken {
    /// The token if it still has more than [`REFRESH_MARGIN`] to live at `now`.
    pub fn valid_at(&self, now: SystemTime) -> Option<&str> {
        (now + REFRESH_MARGIN < self.expires_at).then_some(self.token.as_str())
    }
}

/// The access tokens of one set of credentials, fetched when needed and shared by every step
/// (and every model) that uses them.
pub struct GoogleAuth {
    provider: String,
    credentials: Credentials,
    http: reqwest::Client,
    clock: Clock,
    cached: tokio::sync::Mutex<Option<CachedToken>>,
}

/// What a token endpoint answers.
#[derive(Deserialize)]
struct TokenAnswer {
    access_token: String,
    #[serde(default)]
    expires_in: Option<u64>,
}

impl GoogleAuth {
    /// Tokens for `credentials`, requested over `http`, timed by `clock`.
    pub fn new(
        provider: &str,
        credentials: Credentials,
        http: reqwest::Client,
        clock: Clock,
    ) -> GoogleAuth {
        GoogleAuth {
            provider: provider.to_string(),
            credentials,
            http,
            clock,
            cached: tokio::sync::Mutex::new(None),
        }
    }

    /// The credentials' secrets, to scrub from texts.
    pub fn secrets(&self) -> Vec<String> {
        self.credentials.secrets()
    }

    /// A valid access token: the cached one, or a new one when it is missing or about to
    /// expire.
    pub async fn token(&self) -> Result<String, ProviderError> {
        let mut cached = self.cached.lock().await;
        let now = (self.clock)();
        if let Some(token) = cached.as_ref().and_then(|t| t.valid_at(now)) {
            return Ok(token.to_string());
        }
        let fresh = self.exchange(now).await?;
        let token = fresh.token.clone();
        *cached = Some(fresh);
        Ok(token)
    }

    async fn exchange(&self, now: SystemTime) -> Result<CachedToken, ProviderError> {
        let mut secrets = self.credentials.secrets();
        let uri = self.credentials.token_uri().to_string();
        let form: Vec<(&str, String)> = match &self.credentials {
            Credentials::ServiceAccount {
                client_email,
                private_key,
                private_key_id,
                ..
            } => {
                let jwt = service_account_jwt(
                    client_email,
                    private_key,
                    private_key_id.as_deref(),
                    &uri,
                    now,
                )
                .map_err(|message| self.config_error(message))?;
                secrets.push(jwt.clone());
                vec![
                    (
                        "grant_type",
                        "urn:ietf:params:oauth:grant-type:jwt-bearer".to_string(),
                    ),
                    ("assertion", jwt),
                ]
            }
            Credentials::AuthorizedUser {
                client_id,
                client_secret,
                refresh_token,
                ..
            } => vec![
                ("grant_type", "refresh_token".to_string()),
                ("client_id", client_id.clone()),
                ("client_secret", client_secret.clone()),
                ("refresh_token", refresh_token.clone()),
            ],
        };
        let redactor = Redactor::new(secrets);
        let body = form_encode(&form);
        let response = self
            .http
            .post(&uri)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .map_err(|err| ProviderError::Network {
                provider: self.provider.clone(),
                message: redactor.scrub(&format!("token request to {uri}: {err}")),
            })?;
        let status = response.status().as_u16();
        let text = response
            .text()
            .await
            .map_err(|err| ProviderError::Network {
                provider: self.provider.clone(),
                message: redactor.scrub(&format!("token answer from {uri}: {err}")),
            })?;
        if !(200..300).contains(&status) {
            let shown: String = text.chars().take(CAP as usize / 4096).collect();
            let message = redactor.scrub(&format!("the token endpoint {uri} refused: {shown}"));
            return Err(if (400..500).contains(&status) {
                ProviderError::Auth {
                    provider: self.provider.clone(),
                    status,
                    message,
                    hint: "GOOGLE_APPLICATION_CREDENTIALS (a service-account key with access to Vertex AI) or `gcloud auth application-default login`".to_string(),
                }
            } else {
                ProviderError::Server {
                    provider: self.provider.clone(),
                    status,
                    message,
                    retry_after: None,
                }
            });
        }
        let answer: TokenAnswer =
            serde_json::from_str(&text).map_err(|_| ProviderError::Decode {
                provider: self.provider.clone(),
                message: format!("the token endpoint {uri} answered without an access_token"),
                retryable: false,
            })?;
        Ok(CachedToken {
            token: answer.access_token,
            expires_at: now + Duration::from_secs(answer.expires_in.unwrap_or(3600)),
        })
    }

    fn config_error(&self, message: String) -> ProviderError {
        ProviderError::Config {
            provider: self.provider.clone(),
            message,
        }
    }
}

/// `application/x-www-form-urlencoded` of `pairs`.
fn form_encode(pairs: &[(&str, String)]) -> String {
    fn encode(text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        for byte in text.bytes() {
            match byte {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                    out.push(char::from(byte))
                }
                b' ' => out.push('+'),
                _ => out.push_str(&format!("%{byte:02X}")),
            }
        }
        out
    }
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_used_until_it_nears_its_expiry() {
        let t0 = UNIX_EPOCH + Duration::from_secs(1_000_000);
        let token = CachedToken {
            token: "ya29.x".into(),
            expires_at: t0 + Duration::from_secs(3600),
        };
        assert_eq!(token.valid_at(t0), Some("ya29.x"));
        assert_eq!(
            token.valid_at(t0 + Duration::from_secs(3000)),
            Some("ya29.x")
        );
        // Inside the margin: fetched again.
        assert_eq!(token.valid_at(t0 + Duration::from_secs(3400)), None);
        assert_eq!(token.valid_at(t0 + Duration::from_secs(4000)), None);
    }

    #[test]
    fn form_values_are_escaped() {
        assert_eq!(
            form_encode(&[("grant_type", "urn:a b".into()), ("x", "a+b/c=".into())]),
            "grant_type=urn%3Aa+b&x=a%2Bb%2Fc%3D"
        );
    }

    #[test]
    fn credentials_show_no_secret_in_debug_and_read_errors() {
        let sa: Credentials = serde_json::from_str(
            r#"{"type":"service_account","client_email":"a@p.iam","private_key":"-----BEGIN PRIVATE KEY-----\nSECRETPEM\n-----END PRIVATE KEY-----\n"}"#,
        )
        .unwrap();
        assert!(!format!("{sa:?}").contains("SECRETPEM"));
        assert!(sa.secrets().contains(&"SECRETPEM".to_string()));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.json");
        std::fs::write(
            &path,
            "{\"type\":\"other\",\"refresh_token\":\"SECRET-RT\"}",
        )
        .unwrap();
        let err = Credentials::read(&path).unwrap_err();
        assert!(
            !err.contains("SECRET-RT") && err.contains("c.json"),
            "{err}"
        );
    }

    #[test]
    fn adc_is_found_in_the_variable_then_in_gclouds_folder() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().to_str().unwrap().to_string();
        let var = |set: Vec<(&'static str, String)>| {
            move |name: &str| set.iter().find(|(k, _)| *k == name).map(|(_, v)| v.clone())
        };
        assert_eq!(credentials_path(var(vec![("HOME", home.clone())])), None);
        let adc = dir
            .path()
            .join(".config/gcloud/application_default_credentials.json");
        std::fs::create_dir_all(adc.parent().unwrap()).unwrap();
        std::fs::write(&adc, "{}").unwrap();
        assert_eq!(
            credentials_path(var(vec![("HOME", home.clone())])),
            Some(adc)
        );
        assert_eq!(
            credentials_path(var(vec![
                ("HOME", home),
                ("GOOGLE_APPLICATION_CREDENTIALS", "/k.json".into())
            ])),
            Some(PathBuf::from("/k.json"))
        );
    }
}
