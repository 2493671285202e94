//! Many videos: `lanes batch` and the Redis Streams queue. Imports the layers below.

pub mod batch;
pub mod queue;
