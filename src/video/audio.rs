//! An audio stream the output's container cannot hold, converted to AAC: a cheap dashcam's
//! AVI or MOV records PCM, which an MP4 (what a browser plays) does not take. FFmpeg's own
//! tool does the same when its output cannot keep the codec: it encodes the container's
//! default, AAC for MP4. The samples keep their rate and channels (more than two are mixed
//! down to stereo); only the sample format changes (libswresample), then the native AAC
//! encoder takes them in frames of its own size.

use ffmpeg::ffi;
use ffmpeg::format::sample::Type as SampleType;
use ffmpeg::format::Sample;
use ffmpeg::{ChannelLayout, Rational};
use ffmpeg_next as ffmpeg;

/// The sample rates AAC can signal (ISO 14496-3, the sampling frequency index).
const AAC_RATES: [u32; 13] = [
    96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350,
];

/// Bit rate per channel, bits per second: 64 kb/s (FFmpeg's own default for its AAC encoder is
/// 128 kb/s for stereo; a dashcam's microphone records cabin noise and speech).
const BITS_PER_CHANNEL: usize = 64_000;

/// The converter of one input audio stream: decoder, sample-format converter, AAC encoder, and
/// the samples waiting for a whole AAC frame.
pub(super) struct AacConvert {
    decoder: ffmpeg::decoder::Audio,
    resampler: ffmpeg::software::resampling::Context,
    encoder: ffmpeg::encoder::Audio,
    /// One queue of converted samples per output channel.
    queue: Vec<Vec<f32>>,
    layout: ChannelLayout,
    rate: u32,
    frame_size: usize,
    /// The output time (samples) of the first queued sample, once the first packet is in.
    next_pts: Option<i64>,
    /// The encoder's time base (1 / rate).
    enc_tb: Rational,
    /// Bits per second, for the summary.
    pub(super) bit_rate: usize,
}

impl AacConvert {
    /// A converter for an input stream of `params`, its AAC stream added to `out`; the stream's
    /// index. `Err(reason)` when there is no decoder for it, its sample rate is not one AAC
    /// signals, or FFmpeg has no AAC encoder.
    pub(super) fn new(
        params: ffmpeg::codec::Parameters,
        out: &mut ffmpeg::format::context::Output,
    ) -> std::result::Result<(Self, usize), String> {
        let decoder = ffmpeg::codec::context::Context::from_parameters(params)
            .and_then(|c| c.decoder().audio())
            .map_err(|e| format!("no decoder: {e}"))?;
        let rate = decoder.rate();
        if !AAC_RATES.contains(&rate) {
            return Err(format!("its sample rate, {rate} Hz, is not one AAC holds"));
        }
        let channels = decoder.channels().max(1);
        let in_layout = match decoder.channel_layout() {
            l if l.channels() == i32::from(channels) => l,
            _ => ChannelLayout::default(i32::from(channels)),
        };
        let layout = if channels == 1 {
            ChannelLayout::MONO
        } else {
            ChannelLayout::STEREO
        };
        let fltp = Sample::F32(SampleType::Planar);
        let resampler = ffmpeg::software::resampling::Context::get(
            decoder.format(),
            in_layout,
            rate,
            fltp,
            layout,
            rate,
        )
        .map_err(|e| format!("no sample conversion from {:?}: {e}", decoder.format()))?;
        let codec = ffmpeg::encoder::find(ffmpeg::codec::Id::AAC).ok_or("no AAC encoder")?;
        let global = out
            .format()
            .flags()
            .contains(ffmpeg::format::Flags::GLOBAL_HEADER);
        let mut enc = ffmpeg::codec::context::Context::new_with_codec(codec)
            .encoder()
            .audio()
            .map_err(|e| e.to_string())?;
        let n = layout.channels() as usize;
        let bit_rate = BITS_PER_CHANNEL * n;
        enc.set_rate(rate as i32);
        enc.set_channel_layout(layout);
        enc.set_channels(n as i32);
        enc.set_format(fltp);
        enc.set_bit_rate(bit_rate);
        let enc_tb = Rational::new(1, rate as i32);
        enc.set_time_base(enc_tb);
        if global {
            crate::video::libav::add_global_header(&mut enc);
        }
        let encoder = enc
            .open_as(codec)
            .map_err(|e| format!("AAC encoder: {e}"))?;
        let frame_size = (encoder.frame_size() as usize).max(1);
        let mut ost = out.add_stream(codec).map_err(|e| e.to_string())?;
        ost.set_parameters(&encoder);
        ost.set_time_base(enc_tb);
        let index = ost.index();
        Ok((
            Self {
                decoder,
                resampler,
                encoder,
                queue: vec![Vec::new(); n],
                layout,
                rate,
                frame_size,
                next_pts: None,
                enc_tb,
                bit_rate,
            },
            index,
        ))
    }

    /// Decode `packet` (which starts `t_s` seconds into the output), queue its samples, and
    /// write every whole AAC frame as stream `index` (time base `out_tb`) of `out`. A packet
    /// that does not decode is passed over (a glitch in the sound, not a failed run).
    pub(super) fn push(
        &mut self,
        packet: &ffmpeg::Packet,
        t_s: f64,
        (index, out_tb): (usize, Rational),
        out: &mut ffmpeg::format::context::Output,
    ) -> std::result::Result<(), ffmpeg::Error> {
        self.next_pts
            .get_or_insert((t_s.max(0.0) * self.rate as f64).round() as i64);
        if self.decoder.send_packet(packet).is_err() {
            return Ok(());
        }
        self.decoded(false)?;
        self.encode_queue(false, (index, out_tb), out)
    }

    /// The rest of the samples up to `end_s` (the end of the last frame written, output
    /// seconds) as a last, shorter frame, and the encoder's last packets.
    pub(super) fn finish(
        &mut self,
        end_s: f64,
        (index, out_tb): (usize, Rational),
        out: &mut ffmpeg::format::context::Output,
    ) -> std::result::Result<(), ffmpeg::Error> {
        let Some(next) = self.next_pts else {
            return Ok(());
        };
        let _ = self.decoder.send_eof();
        self.decoded(true)?;
        // The last packet read may reach past the last frame: its samples beyond are dropped.
        let keep = ((end_s * self.rate as f64).round() as i64 - next).max(0) as usize;
        for q in self.queue.iter_mut() {
            q.truncate(keep);
        }
        self.encode_queue(true, (index, out_tb), out)?;
        self.encoder.send_eof()?;
        self.write_packets((index, out_tb), out)
    }

    /// The decoder's frames converted into the queue (and, at the end, what the converter
    /// still holds).
    fn decoded(&mut self, end: bool) -> std::result::Result<(), ffmpeg::Error> {
        let mut frame = ffmpeg::frame::Audio::empty();
        while self.decoder.receive_frame(&mut frame).is_ok() {
            self.convert(Some(&frame))?;
        }
        if end {
            self.convert(None)?;
        }
        Ok(())
    }

    /// Convert `frame`'s samples (none: flush the converter) to planar f32 onto the queue.
    fn convert(
        &mut self,
        frame: Option<&ffmpeg::frame::Audio>,
    ) -> std::result::Result<(), ffmpeg::Error> {
        let n_in = frame.map_or(0, |f| f.samples()) as i32;
        // SAFETY: the converter's own context, used for the calls below only.
        let ctx = unsafe { self.resampler.as_mut_ptr() };
        // SAFETY: a query of that context.
        let room = unsafe { ffi::swr_get_out_samples(ctx, n_in) };
        if room <= 0 {
            return Ok(());
        }
        let mut planes: Vec<Vec<f32>> = vec![vec![0.0; room as usize]; self.queue.len()];
        let mut outs: Vec<*mut u8> = planes.iter_mut().map(|p| p.as_mut_ptr().cast()).collect();
        let ins = frame.map_or(std::ptr::null_mut(), |f| unsafe {
            // SAFETY: the decoded frame's own plane pointers, read by swr_convert only.
            (*f.as_ptr()).extended_data as *mut *const u8
        });
        // SAFETY: `outs` holds one buffer of `room` f32 samples per output channel (the
        // converter's planar f32 output); `ins` is the frame's planes of `n_in` samples in the
        // format and layout the converter was set up with (the decoder's), or null to flush.
        let got = unsafe { ffi::swr_convert(ctx, outs.as_mut_ptr(), room, ins, n_in) };
        if got < 0 {
            return Err(ffmpeg::Error::from(got));
        }
        for (q, p) in self.queue.iter_mut().zip(&planes) {
            q.extend_from_slice(&p[..got as usize]);
        }
        Ok(())
    }

    /// Encode the queue in whole frames (at the end, the shorter rest too) and write them.
    fn encode_queue(
        &mut self,
        end: bool,
        (index, out_tb): (usize, Rational),
        out: &mut ffmpeg::format::context::Output,
    ) -> std::result::Result<(), ffmpeg::Error> {
        loop {
            let queued = self.queue.first().map_or(0, Vec::len);
            let n = queued.min(self.frame_size);
            if n == 0 || (n < self.frame_size && !end) {
                return Ok(());
            }
            let mut frame =
                ffmpeg::frame::Audio::new(Sample::F32(SampleType::Planar), n, self.layout);
            frame.set_rate(self.rate);
            for (c, q) in self.queue.iter_mut().enumerate() {
                frame.plane_mut::<f32>(c)[..n].copy_from_slice(&q[..n]);
                q.drain(..n);
            }
            let pts = self.next_pts.unwrap_or(0);
            frame.set_pts(Some(pts));
            self.next_pts = Some(pts + n as i64);
            self.encoder.send_frame(&frame)?;
            self.write_packets((index, out_tb), out)?;
        }
    }

    /// Write the packets the encoder has ready.
    fn write_packets(
        &mut self,
        (index, out_tb): (usize, Rational),
        out: &mut ffmpeg::format::context::Output,
    ) -> std::result::Result<(), ffmpeg::Error> {
        let mut packet = ffmpeg::Packet::empty();
        while self.encoder.receive_packet(&mut packet).is_ok() {
            packet.set_stream(index);
            packet.rescale_ts(self.enc_tb, out_tb);
            packet.set_position(-1);
            packet.write_interleaved(out)?;
        }
        Ok(())
    }
}
