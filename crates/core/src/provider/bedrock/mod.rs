//! AWS Bedrock through the Converse API: `POST {base}/model/{modelId}/converse-stream`, signed
//! with SigV4 (service `bedrock`), answered in AWS's binary event stream.
//!
//! A thin layer like the other wires: `request` builds the Converse body, `decode` reads the
//! events back, `eventstream` cuts the binary stream into checked messages for the shared
//! transport ([`crate::provider::http::BodyFraming::AwsEventStream`]), `sigv4` signs each
//! attempt (a retry is signed anew), and `credentials` finds the keys and region where the AWS
//! tools look. A Bedrock API key (`AWS_BEARER_TOKEN_BEDROCK`) is sent as a bearer token
//! instead of a signature. Retries, redaction and errors are the transport's, as for every
//! provider: `ThrottlingException` (a 429, or an exception inside the stream) is retried with
//! the same backoff.

pub mod credentials;
pub(crate) mod decode;
pub mod eventstream;
pub(crate) mod request;
pub mod sigv4;
pub mod sso;

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use super::error::ProviderError;
use super::http::{
    BodyFraming, Decoder, Wire, WireConfig, WireRequest, json_bytes, percent_encode,
};
use crate::model::{ModelRequest, replay_tag};
use credentials::{AwsEnv, Lookup};
use sigv4::Credentials;

/// The API kind in replay tags (`bedrock/MODEL`).
pub const API_KIND: &str = "bedrock";

/// What to check when Bedrock refuses the credentials.
pub const CREDENTIALS_HINT: &str = "your AWS credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE and ~/.aws/credentials) and the model's access in the Bedrock console";

/// Bedrock's settings of one provider: the lookup settings from its block and the AWS
/// variables of the environment it was resolved in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BedrockSettings {
    /// `profile` and `region` from the provider's block.
    pub lookup: Lookup,
    /// The AWS variables.
    pub env: AwsEnv,
}

/// A [`Wire`] for Bedrock's ConverseStream.
pub struct BedrockWire {
    config: WireConfig,
    settings: BedrockSettings,
    credentials: Mutex<Option<Credentials>>,
}

impl std::fmt::Debug for BedrockWire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BedrockWire")
            .field("config", &self.config)
            .field("settings", &self.settings)
            .finish()
    }
}

/// `(host[:port], path prefix)` of a base URL, the port left out when it is the scheme's
/// default (as the `Host` header carries it).
fn split_base(base: &str) -> (String, String) {
    let (scheme, rest) = base.split_once("://").unwrap_or(("https", base));
    let (authority, path) = match rest.find('/') {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, ""),
    };
    let default_port = if scheme.eq_ignore_ascii_case("http") {
        ":80"
    } else {
        ":443"
    };
    let host = authority.strip_suffix(default_port).unwrap_or(authority);
    (
        host.to_ascii_lowercase(),
        path.trim_end_matches('/').to_string(),
    )
}

impl BedrockWire {
    /// A wire for the provider `config` describes (an empty base URL: the region's endpoint).
    pub fn new(config: WireConfig, settings: BedrockSettings) -> Self {
        let config = WireConfig {
            key_hint: CREDENTIALS_HINT.to_string(),
            ..config
        };
        Self {
            config,
            settings,
            credentials: Mutex::new(None),
        }
    }

    fn config_error(&self, message: String) -> ProviderError {
        ProviderError::Config {
            provider: self.config.provider.clone(),
            message,
        }
    }

    /// The credentials, found once and again shortly before temporary ones expire.
    fn credentials(&self) -> Result<Credentials, ProviderError> {
        let mut cached = self
            .credentials
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let fresh = |c: &Credentials| {
            c.expires
                .is_none_or(|at| at > SystemTime::now() + Duration::from_secs(300))
        };
        if let Some(found) = cached.as_ref().filter(|c| fresh(c)) {
            return Ok(found.clone());
        }
        let found = credentials::credentials(&self.settings.env, &self.settings.lookup)
            .map_err(|message| self.config_error(message))?;
        *cached = Some(found.clone());
        Ok(found)
    }

    fn bearer(&self) -> Option<&str> {
        self.settings.env.get("AWS_BEARER_TOKEN_BEDROCK")
    }
}

/// The variable that points Bedrock's control plane (`ListFoundationModels`) elsewhere, as
/// the AWS SDKs name it.
pub const CONTROL_ENDPOINT_VAR: &str = "AWS_ENDPOINT_URL_BEDROCK";

/// The control plane's base URL: `AWS_ENDPOINT_URL_BEDROCK`, else the region's endpoint.
pub fn control_base(settings: &BedrockSettings) -> Result<String, credentials::Missing> {
    match settings.env.get(CONTROL_ENDPOINT_VAR) {
        Some(base) => Ok(base.trim().trim_end_matches('/').to_string()),
        None => {
            let region = credentials::region(&settings.env, &settings.lookup)?;
            Ok(format!("https://bedrock.{region}.amazonaws.com"))
        }
    }
}

/// A listing request: URL, headers, and the secrets to scrub from what comes back.
pub type ListRequest = (String, Vec<(String, String)>, Vec<String>);

/// The two lists of what a model id may name: `ListFoundationModels` (`GET
/// {control}/foundation-models`) and `ListInferenceProfiles` (`GET
/// {control}/inference-profiles?maxResults=1000`: the cross-region profiles such as
/// `us.anthropic.claude-...`, the only way to call many newer models), in that order, each
/// signed with SigV4 (service `bedrock`) by the credentials a model would use, or with the
/// Bedrock API key as a bearer token; `headers` are the provider's configured ones.
/// Synchronous: finding credentials may run a `credential_process` or ask the SSO portal.
pub fn list_requests(
    settings: &BedrockSettings,
    headers: &[(String, String)],
) -> Result<Vec<ListRequest>, credentials::Missing> {
    Ok(vec![
        list_request(settings, headers, "foundation-models", "")?,
        list_request(settings, headers, "inference-profiles", "maxResults=1000")?,
    ])
}

/// One signed `GET {control}/{operation}?{query}` (`query` already in SigV4's canonical form:
/// sorted, encoded).
fn list_request(
    settings: &BedrockSettings,
    headers: &[(String, String)],
    operation: &str,
    query: &str,
) -> Result<ListRequest, credentials::Missing> {
    let base = control_base(settings)?;
    let (host, prefix) = split_base(&base);
    let path = format!("{prefix}/{operation}");
    let origin = base
        .strip_suffix(prefix.as_str())
        .unwrap_or(&base)
        .to_string();
    let mut out = headers.to_vec();
    let mut secrets = settings.env.secrets();
    if let Some(token) = settings.env.get("AWS_BEARER_TOKEN_BEDROCK") {
        out.push((
            "authorization".to_string(),
            format!("Bearer {}", token.trim()),
        ));
    } else {
        let region = credentials::region(&settings.env, &settings.lookup)?;
        let found = credentials::credentials(&settings.env, &settings.lookup)?;
        out.extend(sigv4::sign(
            &sigv4::Request {
                method: "GET",
                host: &host,
                path: &path,
                query,
                headers: &[],
                payload: b"",
            },
            &sigv4::Scope {
                region: &region,
                service: "bedrock",
                time: SystemTime::now(),
            },
            &found,
        ));
        secrets.push(found.secret_access_key);
        secrets.extend(found.session_token);
    }
    let url = match query {
        "" => format!("{origin}{path}"),
        query => format!("{origin}{path}?{query}"),
    };
    Ok((url, out, secrets))
}

impl Wire for BedrockWire {
    fn config(&self) -> &WireConfig {
        &self.config
    }

    fn secrets(&self) -> Vec<String> {
        let mut out = self.config.secrets();
        out.extend(self.settings.env.secrets());
        if self.bearer().is_none()
            && let Ok(found) = self.credentials()
        {
            out.push(found.secret_access_key);
            out.extend(found.session_token);
        }
        out
    }

    fn build(&self, request: &ModelRequest) -> Result<WireRequest, ProviderError> {
        let region = credentials::region(&self.settings.env, &self.settings.lookup)
            .map_err(|message| self.config_error(message))?;
        let base = match self.config.base() {
            "" => format!("https://bedrock-runtime.{region}.amazonaws.com"),
            base => base.to_string(),
        };
        let (host, prefix) = split_base(&base);
        let path = format!(
            "{prefix}/model/{}/converse-stream",
            percent_encode(&request.model)
        );
        let tag = replay_tag(API_KIND, &request.model);
        let body = json_bytes(
            &self.config.provider,
            &request::body(request, &tag, self.config.vision),
        )?;
        let mut headers = self.config.headers.clone();
        if let Some(token) = self.bearer() {
            headers.push((
                "authorization".to_string(),
                format!("Bearer {}", token.trim()),
            ));
        } else {
            let found = self.credentials()?;
            let signed = sigv4::sign(
                &sigv4::Request {
                    method: "POST",
                    host: &host,
                    path: &path,
                    query: "",
                    headers: &[],
                    payload: &body,
                },
                &sigv4::Scope {
                    region: &region,
                    service: "bedrock",
                    time: SystemTime::now(),
                },
                &found,
            );
            headers.extend(signed);
        }
        let origin = base
            .trim_end_matches('/')
            .strip_suffix(prefix.as_str())
            .unwrap_or(&base)
            .to_string();
        Ok(WireRequest {
            url: format!("{origin}{path}"),
            headers,
            body,
        })
    }

    fn decoder(&self, request: &ModelRequest) -> Box<dyn Decoder> {
        Box::new(decode::BedrockDecoder::new(
            &self.config.provider,
            replay_tag(API_KIND, &request.model),
        ))
    }

    fn framing(&self) -> BodyFraming {
        BodyFraming::AwsEventStream
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn urls_hosts_and_signatures() {
        assert_eq!(
            split_base("https://bedrock-runtime.us-east-1.amazonaws.com:443/"),
            (
                "bedrock-runtime.us-east-1.amazonaws.com".into(),
                String::new()
            )
        );
        assert_eq!(
            split_base("http://127.0.0.1:8080/proxy"),
            ("127.0.0.1:8080".into(), "/proxy".into())
        );
        let wire = BedrockWire::new(
            WireConfig {
                provider: "bedrock".into(),
                ..WireConfig::default()
            },
            BedrockSettings {
                lookup: Lookup::default(),
                env: AwsEnv::from_pairs([
                    ("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE"),
                    ("AWS_SECRET_ACCESS_KEY", "secret-key-123"),
                    ("AWS_SESSION_TOKEN", "session-token-456"),
                    ("AWS_REGION", "eu-central-1"),
                ]),
            },
        );
        let request = crate::provider::test_corpus::hello_request(
            "eu.anthropic.claude-sonnet-4-5-20250929-v1:0",
        );
        let built = wire.build(&request).unwrap();
        assert_eq!(
            built.url,
            "https://bedrock-runtime.eu-central-1.amazonaws.com/model/eu.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream"
        );
        let names: Vec<&str> = built.headers.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            ["x-amz-date", "x-amz-security-token", "authorization"]
        );
        assert!(
            built.headers[2]
                .1
                .contains("/eu-central-1/bedrock/aws4_request")
        );
        let secrets = wire.secrets();
        assert!(secrets.contains(&"secret-key-123".to_string()));
        assert!(secrets.contains(&"session-token-456".to_string()));
    }
}
