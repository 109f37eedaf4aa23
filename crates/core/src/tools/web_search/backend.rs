//! The search backends, each speaking its own documented API: how a query becomes a request
//! (method, URL, headers, body) and how the answer becomes results. Nothing here sends
//! anything; the tool sends the request through web_fetch's one HTTP path.
//!
//! - Brave Search API: `GET {url}?q=QUERY&count=N`, key in `X-Subscription-Token`; results in
//!   `web.results[]` as `title`, `url`, `description` (with `<strong>` marks). An answer with
//!   no `web` part is a search that found nothing.
//! - Tavily: `POST {url}` with `{"query", "max_results"}`, key as `Authorization: Bearer`;
//!   results in `results[]` as `title`, `url`, `content`.
//! - Exa: `POST {url}` with `{"query", "numResults", "type": "auto", "contents":
//!   {"highlights": true}}`, key in `x-api-key`; results in `results[]` as `title`, `url` and
//!   `highlights[]` (else `summary`, else `text`).
//! - SearXNG: `GET {url}/search?q=QUERY&format=json`, no key; results in `results[]` as
//!   `title`, `url`, `content`. An instance answers 403 when its `search.formats` lacks `json`.

use reqwest::Url;
use serde_json::{Value, json};

/// A web search service web_search can ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchBackend {
    /// Brave Search API (key: `BRAVE_API_KEY`).
    Brave,
    /// Tavily (key: `TAVILY_API_KEY`).
    Tavily,
    /// Exa (key: `EXA_API_KEY`).
    Exa,
    /// A SearXNG instance at the user's URL (no key): the keyless backend.
    Searxng,
}

impl SearchBackend {
    /// Every backend, in the order the docs list them.
    pub const ALL: [SearchBackend; 4] = [Self::Brave, Self::Tavily, Self::Exa, Self::Searxng];

    /// The name used in config and recipes.
    pub fn name(self) -> &'static str {
        match self {
            Self::Brave => "brave",
            Self::Tavily => "tavily",
            Self::Exa => "exa",
            Self::Searxng => "searxng",
        }
    }

    /// The backend named `name` (as config and recipes write it).
    pub fn parse(name: &str) -> Option<SearchBackend> {
        Self::ALL.into_iter().find(|b| b.name() == name.trim())
    }

    /// The service's own endpoint; `None` for SearXNG, which has none (the user runs it).
    pub fn default_url(self) -> Option<&'static str> {
        match self {
            Self::Brave => Some("https://api.search.brave.com/res/v1/web/search"),
            Self::Tavily => Some("https://api.tavily.com/search"),
            Self::Exa => Some("https://api.exa.ai/search"),
            Self::Searxng => None,
        }
    }

    /// The environment variable holding the key, as each service's own tools name it (`None`:
    /// no key).
    pub fn key_var(self) -> Option<&'static str> {
        match self {
            Self::Brave => Some("BRAVE_API_KEY"),
            Self::Tavily => Some("TAVILY_API_KEY"),
            Self::Exa => Some("EXA_API_KEY"),
            Self::Searxng => None,
        }
    }

    /// The name people know the service by, for messages.
    pub fn title(self) -> &'static str {
        match self {
            Self::Brave => "Brave Search",
            Self::Tavily => "Tavily",
            Self::Exa => "Exa",
            Self::Searxng => "SearXNG",
        }
    }
}

/// One request to a backend, ready to send.
#[derive(Debug)]
pub(crate) struct Request {
    /// The full URL (query string included).
    pub(crate) url: Url,
    /// GET or POST.
    pub(crate) method: reqwest::Method,
    /// Headers, the key among them.
    pub(crate) headers: Vec<(&'static str, String)>,
    /// A JSON body, for the POST APIs.
    pub(crate) body: Option<Vec<u8>>,
}

/// The request asking `backend` at `endpoint` for `count` results for `query`.
pub(crate) fn request(
    backend: SearchBackend,
    endpoint: &Url,
    key: Option<&str>,
    query: &str,
    count: usize,
) -> Request {
    let mut headers = vec![("accept", "application/json".to_string())];
    let key = key.unwrap_or_default().to_string();
    let post = |body: Value| Some(body.to_string().into_bytes());
    match backend {
        SearchBackend::Brave => {
            let mut url = endpoint.clone();
            url.query_pairs_mut()
                .append_pair("q", query)
                .append_pair("count", &count.to_string());
            headers.push(("x-subscription-token", key));
            Request {
                url,
                method: reqwest::Method::GET,
                headers,
                body: None,
            }
        }
        SearchBackend::Tavily => {
            headers.push(("content-type", "application/json".to_string()));
            headers.push(("authorization", format!("Bearer {key}")));
            Request {
                url: endpoint.clone(),
                method: reqwest::Method::POST,
                headers,
                body: post(json!({"query": query, "max_results": count})),
            }
        }
        SearchBackend::Exa => {
            headers.push(("content-type", "application/json".to_string()));
            headers.push(("x-api-key", key));
            Request {
                url: endpoint.clone(),
                method: reqwest::Method::POST,
                headers,
                body: post(json!({
                    "query": query,
                    "numResults": count,
                    "type": "auto",
                    "contents": {"highlights": true}
                })),
            }
        }
        SearchBackend::Searxng => {
            let mut url = endpoint.clone();
            // The instance's root as the user wrote it, with the API's path after it.
            if !url.path().trim_end_matches('/').ends_with("/search") {
                let path = format!("{}/search", url.path().trim_end_matches('/'));
                url.set_path(&path);
            }
            url.query_pairs_mut()
                .append_pair("q", query)
                .append_pair("format", "json");
            Request {
                url,
                method: reqwest::Method::GET,
                headers,
                body: None,
            }
        }
    }
}

/// One result as the model reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hit {
    /// The page title (plain text).
    pub(crate) title: String,
    /// Its address.
    pub(crate) url: String,
    /// What the service says of it (plain text; may be empty).
    pub(crate) snippet: String,
}

/// The results in `body`, or what is wrong with it (said to the model as the reason).
pub(crate) fn parse(backend: SearchBackend, body: &[u8]) -> Result<Vec<Hit>, String> {
    let value: Value = serde_json::from_slice(body).map_err(|e| format!("not JSON ({e})"))?;
    if !value.is_object() {
        return Err("not a JSON object".to_string());
    }
    let list = match backend {
        SearchBackend::Brave => match value.get("web") {
            Some(web) => web
                .get("results")
                .ok_or("`web` without `results`")?
                .as_array()
                .ok_or("`web.results` is not a list")?
                .clone(),
            // A search that found nothing has no `web` part; anything else is not Brave's.
            None if value.get("type").and_then(Value::as_str) == Some("search") => Vec::new(),
            None => return Err("no `web` results and not a search answer".to_string()),
        },
        _ => value
            .get("results")
            .ok_or("no `results` list")?
            .as_array()
            .ok_or("`results` is not a list")?
            .clone(),
    };
    let text = |item: &Value, key: &str| -> String {
        item.get(key)
            .and_then(Value::as_str)
            .map(super::super::web_fetch::inline_text)
            .unwrap_or_default()
    };
    let mut hits = Vec::with_capacity(list.len());
    for item in &list {
        let Some(url) = item.get("url").and_then(Value::as_str) else {
            continue;
        };
        let snippet = match backend {
            SearchBackend::Brave => text(item, "description"),
            SearchBackend::Tavily | SearchBackend::Searxng => text(item, "content"),
            SearchBackend::Exa => {
                let highlights: Vec<String> = item
                    .get("highlights")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(super::super::web_fetch::inline_text)
                    .filter(|h| !h.is_empty())
                    .collect();
                if !highlights.is_empty() {
                    highlights.join(" … ")
                } else if !text(item, "summary").is_empty() {
                    text(item, "summary")
                } else {
                    text(item, "text")
                }
            }
        };
        hits.push(Hit {
            title: text(item, "title"),
            url: url.trim().to_string(),
            snippet,
        });
    }
    Ok(hits)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[test]
    fn each_backend_is_asked_in_its_own_format() {
        let brave = request(
            SearchBackend::Brave,
            &url("https://api.search.brave.com/res/v1/web/search"),
            Some("k1"),
            "rust async & tokio",
            5,
        );
        assert_eq!(brave.method, reqwest::Method::GET);
        assert_eq!(
            brave.url.as_str(),
            "https://api.search.brave.com/res/v1/web/search?q=rust+async+%26+tokio&count=5"
        );
        assert!(
            brave
                .headers
                .contains(&("x-subscription-token", "k1".into()))
        );
        let tavily = request(
            SearchBackend::Tavily,
            &url("https://api.tavily.com/search"),
            Some("tvly-2"),
            "q",
            3,
        );
        assert_eq!(tavily.method, reqwest::Method::POST);
        assert!(
            tavily
                .headers
                .contains(&("authorization", "Bearer tvly-2".into()))
        );
        let body: Value = serde_json::from_slice(tavily.body.as_ref().unwrap()).unwrap();
        assert_eq!(body, json!({"query": "q", "max_results": 3}));
        let exa = request(
            SearchBackend::Exa,
            &url("https://api.exa.ai/search"),
            Some("e3"),
            "q",
            4,
        );
        assert!(exa.headers.contains(&("x-api-key", "e3".into())));
        let body: Value = serde_json::from_slice(exa.body.as_ref().unwrap()).unwrap();
        assert_eq!(body["numResults"], 4);
        assert_eq!(body["contents"]["highlights"], true);
        for root in [
            "http://localhost:8888",
            "http://localhost:8888/",
            "http://h/search",
        ] {
            let searx = request(SearchBackend::Searxng, &url(root), None, "a b", 5);
            assert_eq!(searx.url.path(), "/search", "{root}");
            assert_eq!(searx.url.query(), Some("q=a+b&format=json"), "{root}");
        }
        let sub = request(
            SearchBackend::Searxng,
            &url("https://example.org/searx/"),
            None,
            "x",
            5,
        );
        assert_eq!(sub.url.path(), "/searx/search");
    }

    #[test]
    fn answers_become_plain_hits_and_wrong_shapes_are_said() {
        let brave = br#"{"type":"search","web":{"type":"search","results":[
            {"title":"The <strong>Rust</strong> Book","url":"https://doc.rust-lang.org/book/",
             "description":"Learn <strong>Rust</strong> &amp; more"}]}}"#;
        assert_eq!(
            parse(SearchBackend::Brave, brave).unwrap(),
            [Hit {
                title: "The Rust Book".into(),
                url: "https://doc.rust-lang.org/book/".into(),
                snippet: "Learn Rust & more".into()
            }]
        );
        assert!(
            parse(SearchBackend::Brave, br#"{"type":"search"}"#)
                .unwrap()
                .is_empty()
        );
        let exa = br#"{"requestId":"r","results":[{"title":null,"url":"https://e.x/",
            "highlights":["one.","two."]}]}"#;
        let hits = parse(SearchBackend::Exa, exa).unwrap();
        assert_eq!(hits[0].snippet, "one. … two.");
        assert_eq!(hits[0].title, "");
        assert!(
            parse(SearchBackend::Tavily, b"<html>rate limited</html>")
                .unwrap_err()
                .starts_with("not JSON")
        );
        assert_eq!(
            parse(SearchBackend::Searxng, br#"{"query":"q"}"#).unwrap_err(),
            "no `results` list"
        );
    }
}
