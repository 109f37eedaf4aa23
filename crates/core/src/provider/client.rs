//! The one interface the agent loop talks to: send a request, get a stream of events.

use futures::stream::BoxStream;
use tokio_util::sync::CancellationToken;

use super::ProviderError;
use crate::model::{ModelRequest, StreamEvent};

/// Events of one request; ends after [`StreamEvent::Completed`] or an error.
pub type EventStream = BoxStream<'static, Result<StreamEvent, ProviderError>>;

/// A model endpoint. HTTP adapters ([`super::http::HttpModel`]) and the offline demo provider
/// both implement it, so the loop has one code path for every provider.
pub trait ModelClient: Send + Sync {
    /// Name shown in messages (`openai`, `anthropic`, a configured provider name, `demo`).
    fn provider(&self) -> &str;

    /// Streams one response. Retries happen inside (announced by [`StreamEvent::Retrying`]);
    /// cancelling `cancel` ends the stream with [`ProviderError::Cancelled`].
    fn stream(&self, request: ModelRequest, cancel: CancellationToken) -> EventStream;
}
