//! What the answering model can take, asked once per target and kept: whether it reads
//! images (its provider's model listing, else — for the local server — its `/props`). A
//! request with an image for a model known to read none is a 400 naming it: the answer
//! would change if the image were dropped. Unknown is not a refusal.

use std::time::Duration;

use qore_client::protocols::llamacpp;
use qore_core::{ContentBlock, ToolResultPart};

use crate::route::Candidate;
use crate::{Inbound, ServeError};

/// How long asking a provider what its model takes may delay a request, once.
const ASK_TIMEOUT: Duration = Duration::from_secs(5);

/// Whether `inbound` carries an image anywhere (a message or a tool result).
pub fn has_image(inbound: &Inbound) -> bool {
    (inbound.history.iter())
        .flat_map(|m| &m.blocks)
        .any(|b| match b {
            ContentBlock::Image(_) => true,
            ContentBlock::ToolResult { content, .. } => content
                .iter()
                .any(|p| matches!(p, ToolResultPart::Image(_))),
            _ => false,
        })
}

/// 400 when `inbound` has an image and `candidate`'s model is known to read none.
pub async fn check_images(candidate: &Candidate, inbound: &Inbound) -> Result<(), ServeError> {
    if !has_image(inbound) {
        return Ok(());
    }
    let images = candidate
        .images
        .get_or_init(|| async {
            (tokio::time::timeout(ASK_TIMEOUT, takes_images(candidate)).await).unwrap_or(None)
        })
        .await;
    match images {
        Some(false) => Err(ServeError::invalid(
            "messages",
            format!(
                "the model {:?} does not take images, and the request has one",
                candidate.name
            ),
        )),
        _ => Ok(()),
    }
}

async fn takes_images(candidate: &Candidate) -> Option<bool> {
    let target = &candidate.target;
    if let Ok(models) = target.client.list_models().await {
        let listed = (models.iter()).find(|m| m.id == target.model);
        if let Some(images) = listed.and_then(|m| m.capabilities.images) {
            return Some(images);
        }
    }
    if target.local {
        return llamacpp::props(&target.client).await.ok()?.vision;
    }
    None
}
