//! Many videos: `lanes batch` and the Redis Streams queue. Imports the layers below.

pub mod batch;
pub mod batch_index;
pub mod manifest;
pub mod queue;
