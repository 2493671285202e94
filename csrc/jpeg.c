/* JPEG decoding and encoding through the system's libjpeg (libjpeg-turbo), with the settings
 * OpenCV's imgcodecs uses: the default (ISLOW) DCT and fancy upsampling, BGR or gray out,
 * baseline quantisation tables at the quality asked for. Errors return a message instead of
 * exiting; warnings (corrupt data libjpeg resynchronised past) are counted and the first one's
 * message kept, as libjpeg's own message handler prints only the first.
 * Called from src/base/jpeg.rs; see it for the contract of each function. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>

struct lanes_err {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    int warnings;
    char message[JMSG_LENGTH_MAX];
};

static void lanes_error_exit(j_common_ptr c) {
    struct lanes_err *e = (struct lanes_err *)c->err;
    (*c->err->format_message)(c, e->message);
    longjmp(e->jump, 1);
}

static void lanes_emit_message(j_common_ptr c, int level) {
    struct lanes_err *e = (struct lanes_err *)c->err;
    if (level < 0) {
        if (e->warnings == 0)
            (*c->err->format_message)(c, e->message);
        e->warnings++;
    }
}

/* Point a codec's error manager at `err`: errors jump back, warnings are counted. */
static void lanes_init_err(struct lanes_err *err, struct jpeg_error_mgr **slot) {
    memset(err, 0, sizeof *err);
    *slot = jpeg_std_error(&err->pub);
    err->pub.error_exit = lanes_error_exit;
    err->pub.emit_message = lanes_emit_message;
}

static void copy_message(const struct lanes_err *e, char *msg, size_t msg_len) {
    if (msg && msg_len > 0) {
        strncpy(msg, e->message, msg_len - 1);
        msg[msg_len - 1] = 0;
    }
}

/* Where a decode writes its pixels: returns a buffer of width * height * channels bytes, rows
 * packed, owned by the caller (`ctx`), or NULL when it cannot be had. */
typedef unsigned char *(*lanes_alloc_fn)(void *ctx, int width, int height, int channels);

/* Decode `len` bytes to 8-bit BGR (`gray` 0) or gray (`gray` 1) into the buffer `alloc` gives
 * once the size is known. Returns 0 on success with *warnings set (the first warning's text in
 * msg), 1 on failure with the error's text in msg. */
int lanes_jpeg_decode(const unsigned char *data, unsigned long len, int gray,
                      lanes_alloc_fn alloc, void *ctx, int *warnings, char *msg,
                      size_t msg_len) {
    struct jpeg_decompress_struct cinfo;
    struct lanes_err err;
    unsigned char *volatile row = NULL;
    *warnings = 0;
    lanes_init_err(&err, &cinfo.err);
    if (setjmp(err.jump)) {
        copy_message(&err, msg, msg_len);
        free(row);
        jpeg_destroy_decompress(&cinfo);
        return 1;
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, data, len);
    jpeg_read_header(&cinfo, TRUE);
    int channels;
    if (cinfo.num_components == 4) {
        cinfo.out_color_space = JCS_CMYK;
        channels = 4;
    } else if (gray) {
        cinfo.out_color_space = JCS_GRAYSCALE;
        channels = 1;
    } else {
        cinfo.out_color_space = JCS_EXT_BGR;
        channels = 3;
    }
    jpeg_start_decompress(&cinfo);
    size_t w = cinfo.output_width, h = cinfo.output_height;
    size_t out_ch = gray ? 1 : 3;
    unsigned char *pixels = alloc(ctx, (int)w, (int)h, (int)out_ch);
    if (channels == 4)
        row = malloc(w * 4);
    if (!pixels || (channels == 4 && !row)) {
        snprintf(err.message, sizeof err.message, "out of memory for %zux%zu pixels", w, h);
        copy_message(&err, msg, msg_len);
        free(row);
        jpeg_destroy_decompress(&cinfo);
        return 1;
    }
    while (cinfo.output_scanline < h) {
        size_t y = cinfo.output_scanline;
        unsigned char *dst = pixels + y * w * out_ch;
        JSAMPROW r = channels == 4 ? row : dst;
        if (jpeg_read_scanlines(&cinfo, &r, 1) != 1) {
            /* Cannot happen with a memory source (it pads a short file); rows not read stay
             * black rather than undefined. */
            memset(dst, 0, (h - y) * w * out_ch);
            break;
        }
        if (channels == 4) {
            /* imgcodecs' CMYK conversion (icvCvt_CMYK2BGR / CMYK2Gray): each of C, M, Y becomes
             * K - ((255 - v) * K >> 8), as R, G, B; gray with OpenCV's weights. */
            for (size_t x = 0; x < w; x++) {
                int c = row[4 * x], m = row[4 * x + 1], yy = row[4 * x + 2], k = row[4 * x + 3];
                int rr = k - ((255 - c) * k >> 8), g = k - ((255 - m) * k >> 8),
                    b = k - ((255 - yy) * k >> 8);
                if (gray) {
                    dst[x] = (unsigned char)((b * 1868 + g * 9617 + rr * 4899 + 8192) >> 14);
                } else {
                    dst[3 * x] = (unsigned char)b;
                    dst[3 * x + 1] = (unsigned char)g;
                    dst[3 * x + 2] = (unsigned char)rr;
                }
            }
        }
    }
    jpeg_finish_decompress(&cinfo);
    free(row);
    row = NULL;
    *warnings = err.warnings;
    if (err.warnings)
        copy_message(&err, msg, msg_len);
    jpeg_destroy_decompress(&cinfo);
    return 0;
}

/* Encode packed 8-bit BGR (`channels` 3) or gray (1) rows `stride` bytes apart at `quality`
 * (0..100). On success returns 0 and sets *out (free with lanes_jpeg_free) and *out_len; on
 * failure returns 1 with the error's text in msg. */
int lanes_jpeg_encode(const unsigned char *pixels, int width, int height, size_t stride,
                      int channels, int quality, unsigned char **out, unsigned long *out_len,
                      char *msg, size_t msg_len) {
    struct jpeg_compress_struct cinfo;
    struct lanes_err err;
    unsigned char *buf = NULL;
    unsigned long buf_len = 0;
    *out = NULL;
    *out_len = 0;
    lanes_init_err(&err, &cinfo.err);
    if (setjmp(err.jump)) {
        /* The memory destination may have replaced its buffer by a larger one and freed the
         * first, while `buf` still names the first: it is not freed here (this path needs an
         * allocation failure inside libjpeg; leaking its buffer then beats a double free). */
        copy_message(&err, msg, msg_len);
        jpeg_destroy_compress(&cinfo);
        return 1;
    }
    jpeg_create_compress(&cinfo);
    jpeg_mem_dest(&cinfo, &buf, &buf_len);
    cinfo.image_width = (JDIMENSION)width;
    cinfo.image_height = (JDIMENSION)height;
    cinfo.input_components = channels == 1 ? 1 : 3;
    cinfo.in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_EXT_BGR;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, quality < 0 ? 0 : quality > 100 ? 100 : quality, TRUE);
    jpeg_start_compress(&cinfo, TRUE);
    while (cinfo.next_scanline < cinfo.image_height) {
        JSAMPROW r = (JSAMPROW)(pixels + (size_t)cinfo.next_scanline * stride);
        jpeg_write_scanlines(&cinfo, &r, 1);
    }
    jpeg_finish_compress(&cinfo);
    jpeg_destroy_compress(&cinfo);
    *out = buf;
    *out_len = buf_len;
    return 0;
}

void lanes_jpeg_free(unsigned char *p) { free(p); }
