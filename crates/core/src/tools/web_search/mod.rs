//! web_search: a query sent to the search backend the user configured (Brave, Tavily, Exa or
//! a SearXNG instance), its answer returned as numbered results: title, URL, snippet.
//!
//! The tool runs in versus, not in the sandbox, and reaches the backend through web_fetch's
//! one HTTP path ([`super::web_fetch::send`]): the backend's address is vetted and pinned like
//! a fetched page's, the answer is read up to a cap, and no redirect is followed (it would
//! carry the key to another host). The official endpoints are held to web_fetch's strict
//! address rules; a URL from the user's own config (a SearXNG on this machine or the LAN, a
//! proxy) may be a loopback or private address, never a link-local or cloud metadata one.
//! Every backend failure (refused address, HTTP error, an answer that is not the backend's
//! JSON) is an error result naming the backend and what to check; the run goes on.

mod backend;

use std::fmt;
use std::sync::Arc;

use reqwest::Url;
use serde::Deserialize;
use serde_json::json;

use super::registry::{Handler, Tool, typed};
use super::web_fetch::{self, AddressPolicy, Outgoing};
use super::{ToolClass, ToolContext, ToolError, ToolOutput, ToolSpec};
use backend::Hit;
pub use backend::SearchBackend;

/// Results given when neither the model nor the config asks for another number.
pub const DEFAULT_RESULTS: usize = 5;
/// Results at most, whatever is asked.
pub const MAX_RESULTS: usize = 20;
/// Characters of a query at most (longer ones are refused, not cut).
const MAX_QUERY_CHARS: usize = 400;
/// Characters of a title and of a snippet kept.
const MAX_TITLE_CHARS: usize = 200;
const MAX_SNIPPET_CHARS: usize = 600;
/// Bytes of a backend's answer read at most (a page of results is a few dozen KB).
const MAX_ANSWER_BYTES: usize = 2 * 1024 * 1024;

/// The search backend of a run: which service, where, with which key. The same value is given
/// to every model of a run (it is part of the one tool registry), and [`WebSearchSetup::ledger`]
/// puts the backend into the fairness ledger.
#[derive(Clone, PartialEq, Eq)]
pub struct WebSearchSetup {
    /// The service.
    pub backend: SearchBackend,
    /// Its endpoint (the service's own, or the user's `url`).
    pub endpoint: Url,
    /// The key (from the environment, never from a project file).
    pub key: Option<String>,
    /// Results when the model asks for no number.
    pub results: usize,
    /// The endpoint came from the user's own config: loopback and private addresses allowed.
    pub user_endpoint: bool,
}

impl fmt::Debug for WebSearchSetup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebSearchSetup")
            .field("backend", &self.backend)
            .field("endpoint", &self.endpoint.as_str())
            .field("key", &self.key.as_ref().map(|_| "[set]"))
            .field("results", &self.results)
            .field("user_endpoint", &self.user_endpoint)
            .finish()
    }
}

impl WebSearchSetup {
    /// The setup for `backend`: the endpoint `url` (else the service's own), the key looked up
    /// with `key` (the environment) under `key_var` (else the service's variable), `results`
    /// per search (else [`DEFAULT_RESULTS`]). Errors say what to set.
    pub fn new(
        backend: SearchBackend,
        url: Option<&str>,
        key_var: Option<&str>,
        results: Option<usize>,
        key: impl Fn(&str) -> Option<String>,
    ) -> Result<WebSearchSetup, String> {
        let name = backend.name();
        let (text, user_endpoint) = match (url, backend.default_url()) {
            (Some(url), _) => (url.trim().to_string(), true),
            (None, Some(default)) => (default.to_string(), false),
            (None, None) => {
                return Err(format!(
                    "web_search with `{name}` needs the address of your instance: set `url` in \
                     [web_search] of your config (e.g. url = \"http://localhost:8888\")"
                ));
            }
        };
        let endpoint = Url::parse(&text)
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some())
            .ok_or_else(|| {
                format!("[web_search] url `{text}` is not an absolute http:// or https:// URL")
            })?;
        let var = key_var.or(backend.key_var());
        let key = match var {
            Some(var) => match key(var).filter(|k| !k.trim().is_empty()) {
                Some(k) => Some(k.trim().to_string()),
                None => {
                    return Err(format!(
                        "web_search with `{name}` needs its key: set {var} in your environment \
                         (or a trusted .env)"
                    ));
                }
            },
            None => None,
        };
        let results = results.unwrap_or(DEFAULT_RESULTS);
        if results == 0 || results > MAX_RESULTS {
            return Err(format!(
                "[web_search] max_results is {results}; give 1 to {MAX_RESULTS}"
            ));
        }
        Ok(WebSearchSetup {
            backend,
            endpoint,
            key,
            results,
            user_endpoint,
        })
    }

    /// What the fairness ledger records of it: the backend and its endpoint (never the key),
    /// so two models searching different services are flagged.
    pub fn ledger(&self) -> String {
        format!("{} {}", self.backend.name(), self.endpoint)
    }
}

/// The web_search tool for the registry, asking `setup`'s backend.
pub(crate) fn tool(setup: WebSearchSetup) -> Arc<dyn Tool> {
    let default = setup.results;
    typed(
        ToolSpec {
            name: "web_search",
            description: format!(
                "Search the web and get a numbered list of results, each with its title, URL \
                 and a short snippet ({default} results unless you ask for up to \
                 {MAX_RESULTS}). Use web_fetch on a result's URL to read the page itself."
            ),
            parameters: json!({
                "type": "object",
                "properties": {
                    "query": {
                        "type": "string",
                        "description": "What to search for, as you would type it into a search engine."
                    },
                    "max_results": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": MAX_RESULTS,
                        "description": "How many results to return."
                    }
                },
                "required": ["query"],
                "additionalProperties": false
            }),
            guidance: "web_search: search the web for documentation, error messages or \
                releases the project does not have, then web_fetch the pages worth reading; \
                each model's search is a separate real query to the search service."
                .to_string(),
            class: ToolClass::ExternalEffect,
        },
        WebSearch { setup },
    )
}

/// The model's arguments, after the schema check.
#[derive(Debug, Deserialize)]
pub(crate) struct Args {
    /// The query.
    query: String,
    /// Results wanted.
    #[serde(default)]
    max_results: Option<usize>,
}

struct WebSearch {
    setup: WebSearchSetup,
}

impl Handler for WebSearch {
    type Args = Args;
    const CONCURRENT: bool = true;

    fn ledger(&self) -> Option<String> {
        Some(self.setup.ledger())
    }

    async fn run(&self, args: Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let query = args.query.split_whitespace().collect::<Vec<_>>().join(" ");
        if query.is_empty() {
            return Err(ToolError::failed(
                "web_search needs a query: say what to search for",
            ));
        }
        if query.chars().count() > MAX_QUERY_CHARS {
            return Err(ToolError::failed(format!(
                "the query is longer than {MAX_QUERY_CHARS} characters; search for the key \
                 words only"
            )));
        }
        let count = args
            .max_results
            .unwrap_or(self.setup.results)
            .clamp(1, MAX_RESULTS);
        let setup = &self.setup;
        let title = setup.backend.title();
        let request = backend::request(
            setup.backend,
            &setup.endpoint,
            setup.key.as_deref(),
            &query,
            count,
        );
        let outgoing = Outgoing {
            method: request.method,
            headers: request.headers,
            body: request.body,
            max_redirects: 0,
        };
        let policy = AddressPolicy::new(setup.user_endpoint);
        let timeout = ctx.limits.fetch_timeout;
        let cap = ctx.limits.fetch_max_download.min(MAX_ANSWER_BYTES);
        let sending = web_fetch::send(request.url, &outgoing, &policy, cap, timeout);
        let answer = tokio::select! {
            _ = ctx.cancel.cancelled() => {
                return Err(ToolError::Cancelled("web_search was cancelled".to_string()));
            }
            result = tokio::time::timeout(timeout, sending) => match result {
                Err(_) => {
                    return Err(ToolError::failed(format!(
                        "web_search: {title} did not answer within {} s; try again later",
                        timeout.as_secs_f64()
                    )));
                }
                Ok(Err(e)) => {
                    return Err(ToolError::failed(format!(
                        "web_search: could not reach {title}: {e}{}",
                        configured(setup)
                    )));
                }
                Ok(Ok(answer)) => answer,
            },
        };
        let hits = checked(setup, &answer)?;
        Ok(ToolOutput::ok(render(
            setup,
            &query,
            &hits,
            count,
            ctx.limits.fetch_max_return,
        )))
    }
}

/// Where to look when the backend cannot be reached: the user's `url` or the service.
fn configured(setup: &WebSearchSetup) -> String {
    if setup.user_endpoint {
        format!(" (the [web_search] url {} of the config)", setup.endpoint)
    } else {
        String::new()
    }
}

/// The hits of a backend's answer, or an error saying what went wrong and what to check.
fn checked(setup: &WebSearchSetup, answer: &web_fetch::Answer) -> Result<Vec<Hit>, ToolError> {
    let title = setup.backend.title();
    let status = answer.status;
    if !status.is_success() {
        let said = web_fetch::excerpt(&String::from_utf8_lossy(&answer.body));
        let hint = match status.as_u16() {
            401 | 403 if setup.backend == SearchBackend::Searxng => {
                " (a SearXNG instance answers 403 when JSON output is off: add `json` to \
                 `search.formats` in its settings.yml)"
                    .to_string()
            }
            401 | 403 => format!(
                " (check the key in {})",
                setup.backend.key_var().unwrap_or("the environment")
            ),
            429 => " (rate limited: wait before searching again)".to_string(),
            300..=399 => " (a redirect: web_search follows none; set [web_search] url to \
                          the final address)"
                .to_string(),
            500..=599 => " (the service failed: try again later)".to_string(),
            _ => String::new(),
        };
        return Err(ToolError::failed(format!(
            "web_search: {title} answered HTTP {}{hint}{}",
            web_fetch::status_text(answer),
            if said.is_empty() {
                String::new()
            } else {
                format!(". It said: {said}")
            }
        )));
    }
    if answer.cut {
        return Err(ToolError::failed(format!(
            "web_search: {title}'s answer was larger than {} KB and was not read; this is \
             not a search answer{}",
            MAX_ANSWER_BYTES / 1024,
            configured(setup)
        )));
    }
    backend::parse(setup.backend, &answer.body).map_err(|why| {
        ToolError::failed(format!(
            "web_search: {title}'s answer is not a {title} search result ({why}){}; the \
             search gave nothing",
            configured(setup)
        ))
    })
}

/// The model's text: a header line, then each result as `N. title`, its URL and its snippet,
/// cut to `max_bytes` on a result boundary.
fn render(
    setup: &WebSearchSetup,
    query: &str,
    hits: &[Hit],
    count: usize,
    max_bytes: usize,
) -> String {
    let shown: Vec<&Hit> = hits.iter().take(count).collect();
    let mut out = format!(
        "web search ({}) for \"{query}\": {} result{}\n",
        setup.backend.name(),
        shown.len(),
        if shown.len() == 1 { "" } else { "s" }
    );
    if shown.is_empty() {
        out.push_str("\nNo results; try other words.\n");
        return out;
    }
    for (i, hit) in shown.iter().enumerate() {
        let title = if hit.title.is_empty() {
            "(no title)".to_string()
        } else {
            cut_chars(&hit.title, MAX_TITLE_CHARS)
        };
        let mut entry = format!("\n{}. {title}\n   {}\n", i + 1, hit.url);
        if !hit.snippet.is_empty() {
            entry.push_str(&format!(
                "   {}\n",
                cut_chars(&hit.snippet, MAX_SNIPPET_CHARS)
            ));
        }
        if out.len() + entry.len() > max_bytes {
            out.push_str(&format!(
                "\n[results cut: {} of {} shown, to stay within the result size limit]\n",
                i,
                shown.len()
            ));
            break;
        }
        out.push_str(&entry);
    }
    out
}

/// `text` cut to `max` characters, with `…` when cut.
fn cut_chars(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn no_key(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn a_setup_says_what_is_missing() {
        let err = WebSearchSetup::new(SearchBackend::Brave, None, None, None, no_key).unwrap_err();
        assert!(err.contains("set BRAVE_API_KEY"), "{err}");
        let err =
            WebSearchSetup::new(SearchBackend::Searxng, None, None, None, no_key).unwrap_err();
        assert!(err.contains("set `url` in [web_search]"), "{err}");
        let err = WebSearchSetup::new(
            SearchBackend::Searxng,
            Some("localhost:8888"),
            None,
            None,
            no_key,
        )
        .unwrap_err();
        assert!(err.contains("not an absolute http"), "{err}");
        let ok = WebSearchSetup::new(SearchBackend::Exa, None, Some("MY_EXA"), Some(3), |v| {
            (v == "MY_EXA").then(|| "secret-exa".to_string())
        })
        .unwrap();
        assert_eq!(ok.endpoint.as_str(), "https://api.exa.ai/search");
        assert!(!ok.user_endpoint);
        assert_eq!(ok.results, 3);
        assert!(!format!("{ok:?}").contains("secret-exa"));
        assert!(!ok.ledger().contains("secret-exa"));
        assert!(
            WebSearchSetup::new(SearchBackend::Tavily, None, None, Some(21), |_| Some(
                "k".into()
            ))
            .is_err()
        );
    }

    #[test]
    fn results_are_bounded() {
        let setup = WebSearchSetup::new(
            SearchBackend::Searxng,
            Some("http://localhost:8888"),
            None,
            None,
            no_key,
        )
        .unwrap();
        let hits: Vec<Hit> = (0..30)
            .map(|i| Hit {
                title: format!("t{i}"),
                url: format!("https://e.x/{i}"),
                snippet: "s".repeat(2000),
            })
            .collect();
        let text = render(&setup, "q", &hits, 5, 100 * 1024);
        assert!(text.starts_with("web search (searxng) for \"q\": 5 results\n"));
        assert!(text.contains("\n5. t4\n") && !text.contains("t5"));
        assert!(text.contains(&format!("{}…", "s".repeat(MAX_SNIPPET_CHARS))));
        let small = render(&setup, "q", &hits, 5, 1500);
        assert!(small.contains("[results cut: 2 of 5 shown"), "{small}");
    }

    #[tokio::test]
    async fn a_metadata_or_link_local_backend_is_refused_even_from_the_user_config() {
        let setup = WebSearchSetup::new(
            SearchBackend::Searxng,
            Some("http://169.254.169.254/latest"),
            None,
            None,
            no_key,
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new(Arc::new(
            crate::workspace::DirectView::new(dir.path()).unwrap(),
        ));
        let out = tool(setup).call(&json!({"query": "x"}), &ctx).await;
        assert!(out.is_error);
        assert!(out.text.contains("could not reach SearXNG"), "{}", out.text);
        assert!(out.text.contains("cloud metadata"), "{}", out.text);
    }
}
