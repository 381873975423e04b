/* image-decoder.c: the CPU kernel of ImageDecoder: BMP and PNM decoded here; PNG, JPEG, TIFF, WebP
 * and JPEG 2000 through their libraries where the build found them. */
#include "../cpu-kernels-private.h"

#include <stdint.h>
#include <stdio.h> /* jpeglib.h needs FILE */
#include <stdlib.h>
#include <string.h>

/* Decoded images larger than this many pixels are refused (a corrupt header could claim anything). */
#define MAX_IMAGE_PIXELS (G_GINT64_CONSTANT (1) << 28)

/* IMG_CORRUPT covers every stream a decoder cannot handle (damaged, or a variant such as RLE BMP or
 * CMYK JPEG): the operator then gives an empty image. IMG_UNSUPPORTED means this build has no
 * decoder for the whole format, which is reported as an error. */
typedef enum { IMG_OK, IMG_CORRUPT, IMG_UNSUPPORTED } ImgStatus;

static guint32
rd_le32 (const guint8 *p)
{
  return (guint32) p[0] | ((guint32) p[1] << 8) | ((guint32) p[2] << 16) | ((guint32) p[3] << 24);
}

static guint16
rd_le16 (const guint8 *p)
{
  return (guint16) (p[0] | (p[1] << 8));
}

/* Scales a masked bit field of a BMP pixel to 0..255. */
static guint8
bmp_field (guint32 px, guint32 mask)
{
  if (!mask)
    return 0;
  int shift = 0;
  while (!((mask >> shift) & 1))
    shift++;
  guint32 max = mask >> shift, v = (px & mask) >> shift;
  return (guint8) ((v * 255u + max / 2) / max);
}

/* Uncompressed (BI_RGB / BI_BITFIELDS) BMP of 1, 4, 8, 16, 24 or 32 bits per pixel. */
static ImgStatus
decode_bmp (const guint8 *d, gsize len, guint8 **rgb, int64_t *h, int64_t *w)
{
  if (len < 26)
    return IMG_CORRUPT;
  guint32 data_off = rd_le32 (d + 10), hsize = rd_le32 (d + 14);
  int64_t width, height;
  int bpp;
  guint32 compression = 0, colors = 0;
  gsize pal_off = 14 + (gsize) hsize, pal_entry = 4;
  if (hsize == 12)
    {
      width = rd_le16 (d + 18);
      height = rd_le16 (d + 20);
      bpp = rd_le16 (d + 24);
      pal_entry = 3;
    }
  else if (hsize >= 40 && len >= 14 + 40)
    {
      width = (gint32) rd_le32 (d + 18);
      height = (gint32) rd_le32 (d + 22);
      bpp = rd_le16 (d + 28);
      compression = rd_le32 (d + 30);
      colors = rd_le32 (d + 46);
    }
  else
    return IMG_CORRUPT;
  gboolean top_down = height < 0;
  if (top_down)
    height = -height;
  if (width <= 0 || height <= 0 || width * height > MAX_IMAGE_PIXELS)
    return IMG_CORRUPT;
  guint32 masks[3] = { 0, 0, 0 };
  if (compression == 3 /* BI_BITFIELDS */)
    {
      gsize mo = 14 + 40;
      if (len < mo + 12)
        return IMG_CORRUPT;
      for (int i = 0; i < 3; i++)
        masks[i] = rd_le32 (d + mo + 4 * i);
      if (hsize == 40)
        pal_off += 12;
    }
  else if (compression != 0)
    return IMG_CORRUPT;
  else if (bpp == 16)
    {
      masks[0] = 0x7C00;
      masks[1] = 0x03E0;
      masks[2] = 0x001F;
    }
  else if (bpp == 32)
    {
      masks[0] = 0xFF0000;
      masks[1] = 0xFF00;
      masks[2] = 0xFF;
    }
  if (bpp != 1 && bpp != 4 && bpp != 8 && bpp != 16 && bpp != 24 && bpp != 32)
    return IMG_CORRUPT;
  guint8 pal[256][3];
  memset (pal, 0, sizeof pal);
  if (bpp <= 8)
    {
      guint32 n = colors ? MIN (colors, 256u) : (1u << bpp);
      for (guint32 i = 0; i < n; i++)
        {
          gsize o = pal_off + i * pal_entry;
          if (o + 3 > len)
            break;
          pal[i][0] = d[o + 2];
          pal[i][1] = d[o + 1];
          pal[i][2] = d[o];
        }
    }
  gsize stride = (gsize) ((width * bpp + 31) / 32) * 4;
  if (data_off > len || stride * (gsize) height > len - data_off)
    return IMG_CORRUPT;
  guint8 *out = g_try_malloc ((gsize) (width * height * 3));
  if (!out)
    return IMG_CORRUPT;
  for (int64_t y = 0; y < height; y++)
    {
      const guint8 *row = d + data_off + stride * (gsize) (top_down ? y : height - 1 - y);
      guint8 *o = out + y * width * 3;
      for (int64_t x = 0; x < width; x++, o += 3)
        {
          switch (bpp)
            {
            case 1:
            case 4:
            case 8:
              {
                int64_t bit = x * bpp;
                int idx = (row[bit / 8] >> (8 - bpp - (int) (bit % 8))) & ((1 << bpp) - 1);
                memcpy (o, pal[idx], 3);
                break;
              }
            case 24:
              o[0] = row[3 * x + 2];
              o[1] = row[3 * x + 1];
              o[2] = row[3 * x];
              break;
            default:
              {
                guint32 px = bpp == 16 ? rd_le16 (row + 2 * x) : rd_le32 (row + 4 * x);
                for (int c = 0; c < 3; c++)
                  o[c] = bmp_field (px, masks[c]);
                break;
              }
            }
        }
    }
  *rgb = out;
  *h = height;
  *w = width;
  return IMG_OK;
}

/* Next header number of a PNM file, skipping whitespace and comments; -1 on error. */
static int64_t
pnm_number (const guint8 *d, gsize len, gsize *pos)
{
  gsize p = *pos;
  for (;;)
    {
      while (p < len && g_ascii_isspace (d[p]))
        p++;
      if (p < len && d[p] == '#')
        {
          while (p < len && d[p] != '\n' && d[p] != '\r')
            p++;
          continue;
        }
      break;
    }
  if (p >= len || !g_ascii_isdigit (d[p]))
    return -1;
  int64_t v = 0;
  while (p < len && g_ascii_isdigit (d[p]))
    {
      v = v * 10 + (d[p++] - '0');
      if (v > G_MAXINT32)
        return -1;
    }
  *pos = p;
  return v;
}

/* PBM, PGM and PPM, plain (P1-P3) or raw (P4-P6). */
static ImgStatus
decode_pnm (const guint8 *d, gsize len, guint8 **rgb, int64_t *h, int64_t *w)
{
  int kind = d[1] - '0';
  gsize pos = 2;
  int64_t width = pnm_number (d, len, &pos), height = pnm_number (d, len, &pos);
  int64_t maxval = (kind == 1 || kind == 4) ? 1 : pnm_number (d, len, &pos);
  if (width <= 0 || height <= 0 || maxval <= 0 || maxval > 65535 || width * height > MAX_IMAGE_PIXELS)
    return IMG_CORRUPT;
  int comps = (kind == 3 || kind == 6) ? 3 : 1;
  gboolean raw = kind >= 4;
  if (raw)
    pos++; /* the single whitespace byte before the raster */
  guint8 *out = g_try_malloc ((gsize) (width * height * 3));
  if (!out)
    return IMG_CORRUPT;
  int bytes = maxval > 255 ? 2 : 1;
  for (int64_t y = 0; y < height; y++)
    for (int64_t x = 0; x < width; x++)
      {
        guint8 *o = out + (y * width + x) * 3;
        for (int c = 0; c < comps; c++)
          {
            int64_t v;
            if (kind == 4)
              {
                gsize o4 = pos + (gsize) (y * ((width + 7) / 8) + x / 8);
                v = o4 < len ? (d[o4] >> (7 - x % 8)) & 1 : -1;
              }
            else if (raw)
              {
                gsize o6 = pos + (gsize) (((y * width + x) * comps + c) * bytes);
                v = o6 + bytes <= len ? (bytes == 2 ? (d[o6] << 8 | d[o6 + 1]) : d[o6]) : -1;
              }
            else if (kind == 1)
              {
                while (pos < len && (g_ascii_isspace (d[pos]) || d[pos] == '#'))
                  {
                    if (d[pos] == '#')
                      while (pos < len && d[pos] != '\n')
                        pos++;
                    else
                      pos++;
                  }
                v = pos < len && (d[pos] == '0' || d[pos] == '1') ? d[pos++] - '0' : -1;
              }
            else
              v = pnm_number (d, len, &pos);
            if (v < 0 || v > maxval)
              {
                g_free (out);
                return IMG_CORRUPT;
              }
            /* In PBM files 1 is black. */
            guint8 b = (kind == 1 || kind == 4) ? (v ? 0 : 255) : (guint8) ((v * 255 + maxval / 2) / maxval);
            if (comps == 1)
              o[0] = o[1] = o[2] = b;
            else
              o[c] = b;
          }
      }
  *rgb = out;
  *h = height;
  *w = width;
  return IMG_OK;
}

#ifdef OWB_HAVE_LIBJPEG
#include <jpeglib.h>
#include <jerror.h>
#include <setjmp.h>

typedef struct {
  struct jpeg_error_mgr pub;
  jmp_buf jump;
} JpegErr;

static void
jpeg_fail (j_common_ptr c)
{
  longjmp (((JpegErr *) c->err)->jump, 1);
}

static void
jpeg_quiet (j_common_ptr c)
{
}

/* Compressed data that ends (the file, or a marker such as EOI) before the image does is corrupt,
 * as it is to the ONNX reference (PIL), not padded with gray as libjpeg would: a 390-byte file
 * whose header claims 16000 x 16000 pixels was otherwise decoded in full (26-28 s, and 4.5 GB as a
 * calibration image). Other warnings stay quiet. */
static void
jpeg_warn (j_common_ptr c, int level)
{
  if (level < 0 && (c->err->msg_code == JWRN_JPEG_EOF || c->err->msg_code == JWRN_HIT_MARKER))
    longjmp (((JpegErr *) c->err)->jump, 1);
}

/* libjpeg's default decoding (accurate integer IDCT, "fancy" chroma upsampling), as the spec asks. */
static ImgStatus
decode_jpeg (const guint8 *d, gsize len, guint8 **rgb, int64_t *h, int64_t *w)
{
  struct jpeg_decompress_struct cinfo;
  JpegErr err;
  guint8 *volatile out = NULL;
  volatile ImgStatus status = IMG_CORRUPT;
  cinfo.err = jpeg_std_error (&err.pub);
  err.pub.error_exit = jpeg_fail;
  err.pub.output_message = jpeg_quiet;
  err.pub.emit_message = jpeg_warn;
  if (setjmp (err.jump))
    {
      jpeg_destroy_decompress (&cinfo);
      g_free (out);
      return status;
    }
  jpeg_create_decompress (&cinfo);
  jpeg_mem_src (&cinfo, (unsigned char *) d, (unsigned long) len);
  jpeg_read_header (&cinfo, TRUE);
  if (cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK)
    {
      jpeg_destroy_decompress (&cinfo);
      return IMG_CORRUPT;
    }
  cinfo.out_color_space = JCS_RGB;
  jpeg_start_decompress (&cinfo);
  int64_t width = cinfo.output_width, height = cinfo.output_height;
  if (cinfo.output_components != 3 || width <= 0 || height <= 0 || width * height > MAX_IMAGE_PIXELS)
    longjmp (err.jump, 1);
  out = g_try_malloc ((gsize) (width * height * 3));
  if (!out)
    longjmp (err.jump, 1);
  while (cinfo.output_scanline < cinfo.output_height)
    {
      JSAMPROW row = out + (gsize) cinfo.output_scanline * (gsize) width * 3;
      jpeg_read_scanlines (&cinfo, &row, 1);
    }
  jpeg_finish_decompress (&cinfo);
  jpeg_destroy_decompress (&cinfo);
  *rgb = out;
  *h = height;
  *w = width;
  return IMG_OK;
}
#else
#define decode_jpeg NULL /* the format is still recognised: a clear "cannot decode" error */
#endif

#ifdef OWB_HAVE_LIBPNG
#include <png.h>

typedef struct {
  const guint8 *data;
  gsize len, pos;
} PngSource;

static void
png_read_memory (png_structp png, png_bytep out, png_size_t n)
{
  PngSource *s = png_get_io_ptr (png);
  if (n > s->len - s->pos)
    png_error (png, "truncated");
  memcpy (out, s->data + s->pos, n);
  s->pos += n;
}

static void
png_fail (png_structp png, png_const_charp msg)
{
  png_longjmp (png, 1);
}

static void
png_quiet (png_structp png, png_const_charp msg)
{
}

/* A chunk's length is the file's word, and libpng allocates it before reading the data: a 103-byte
 * file whose tEXt chunk claimed 1 GB took 1 GB (libpng's own "chunk data is too large" check is a
 * benign error, a warning when reading). Nothing here reads text or profiles, so libpng gets 8 MB
 * a buffer (its suggested per-chunk limit) until the header is read, then rows as wide as the
 * image; a refused allocation is libpng's out-of-memory error, so the image is corrupt. */
#define PNG_CHUNK_CAP ((gsize) 8 << 20)

typedef struct {
  gsize cap;
} PngAlloc;

static png_voidp
png_alloc_capped (png_structp png, png_alloc_size_t n)
{
  const PngAlloc *alloc = png_get_mem_ptr (png);
  return n <= alloc->cap ? g_try_malloc (n) : NULL;
}

static void
png_free_memory (png_structp png, png_voidp p)
{
  g_free (p);
}

/* 8-bit RGB without gamma correction or alpha: 16-bit samples keep their high byte. */
static ImgStatus
decode_png (const guint8 *d, gsize len, guint8 **rgb, int64_t *h, int64_t *w)
{
  PngSource src = { d, len, 0 };
  PngAlloc alloc = { PNG_CHUNK_CAP };
  png_structp png = png_create_read_struct_2 (PNG_LIBPNG_VER_STRING, NULL, png_fail, png_quiet, &alloc,
                                              png_alloc_capped, png_free_memory);
  if (!png)
    return IMG_CORRUPT;
  png_infop info = png_create_info_struct (png);
  guint8 *volatile out = NULL;
  png_bytep *volatile rows = NULL;
  if (!info || setjmp (png_jmpbuf (png)))
    {
      png_destroy_read_struct (&png, info ? &info : NULL, NULL);
      g_free (out);
      g_free (rows);
      return IMG_CORRUPT;
    }
  png_set_read_fn (png, &src, png_read_memory);
  png_set_chunk_cache_max (png, 1000);
  png_read_info (png, info);
  int64_t width = png_get_image_width (png, info), height = png_get_image_height (png, info);
  int color = png_get_color_type (png, info), depth = png_get_bit_depth (png, info);
  if (width <= 0 || height <= 0 || width * height > MAX_IMAGE_PIXELS)
    png_longjmp (png, 1);
  /* libpng's own buffers from here on are rows (at most 8 bytes a pixel, two of them) */
  alloc.cap = PNG_CHUNK_CAP + (gsize) width * 16;
  if (depth == 16)
    png_set_strip_16 (png);
  if (color == PNG_COLOR_TYPE_PALETTE)
    png_set_palette_to_rgb (png);
  if (color == PNG_COLOR_TYPE_GRAY && depth < 8)
    png_set_expand_gray_1_2_4_to_8 (png);
  if (color & PNG_COLOR_MASK_ALPHA)
    png_set_strip_alpha (png);
  if (color == PNG_COLOR_TYPE_GRAY || color == PNG_COLOR_TYPE_GRAY_ALPHA)
    png_set_gray_to_rgb (png);
  png_set_interlace_handling (png);
  png_read_update_info (png, info);
  if (png_get_rowbytes (png, info) != (png_size_t) width * 3)
    png_longjmp (png, 1);
  out = g_try_malloc ((gsize) (width * height * 3));
  rows = g_try_new (png_bytep, height);
  if (!out || !rows)
    png_longjmp (png, 1);
  for (int64_t y = 0; y < height; y++)
    rows[y] = out + y * width * 3;
  png_read_image (png, rows);
  png_read_end (png, NULL);
  png_destroy_read_struct (&png, &info, NULL);
  g_free (rows);
  *rgb = out;
  *h = height;
  *w = width;
  return IMG_OK;
}
#else
#define decode_png NULL /* the format is still recognised: a clear "cannot decode" error */
#endif

#ifdef OWB_HAVE_LIBWEBP
#include <webp/decode.h>

static ImgStatus
decode_webp (const guint8 *d, gsize len, guint8 **rgb, int64_t *h, int64_t *w)
{
  int width, height;
  if (!WebPGetInfo (d, len, &width, &height) || width <= 0 || height <= 0
      || (int64_t) width * height > MAX_IMAGE_PIXELS)
    return IMG_CORRUPT;
  gsize size = (gsize) width * (gsize) height * 3;
  guint8 *out = g_try_malloc (size);
  if (!out || !WebPDecodeRGBInto (d, len, out, size, width * 3))
    {
      g_free (out);
      return IMG_CORRUPT;
    }
  *rgb = out;
  *h = height;
  *w = width;
  return IMG_OK;
}
#else
#define decode_webp NULL /* the format is still recognised: a clear "cannot decode" error */
#endif

#ifdef OWB_HAVE_LIBTIFF
#include <stdarg.h>
#include <tiffio.h>

/* libtiff reads through these callbacks from memory, and reports errors to a handler of its own
 * (not the process-wide one). */
typedef struct {
  const guint8 *data;
  gsize len;
  toff_t pos;
} TiffMemory;

static tsize_t
tiff_read (thandle_t h, tdata_t buf, tsize_t n)
{
  TiffMemory *m = h;
  if (n < 0 || m->pos >= m->len)
    return 0;
  gsize k = MIN ((gsize) n, m->len - m->pos);
  memcpy (buf, m->data + m->pos, k);
  m->pos += k;
  return (tsize_t) k;
}

static tsize_t
tiff_write (thandle_t h, tdata_t buf, tsize_t n)
{
  return 0;
}

static toff_t
tiff_seek (thandle_t h, toff_t off, int whence)
{
  TiffMemory *m = h;
  int64_t base = whence == SEEK_CUR ? (int64_t) m->pos : whence == SEEK_END ? (int64_t) m->len : 0;
  int64_t p = base + (int64_t) off;
  if (p < 0)
    return (toff_t) -1;
  m->pos = (toff_t) p;
  return m->pos;
}

static int
tiff_close (thandle_t h)
{
  return 0;
}

static toff_t
tiff_size (thandle_t h)
{
  return ((TiffMemory *) h)->len;
}

static int
tiff_map (thandle_t h, tdata_t *base, toff_t *size)
{
  return 0;
}

static void
tiff_unmap (thandle_t h, tdata_t base, toff_t size)
{
}

static int
tiff_quiet (TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
  return 1;
}

static ImgStatus
decode_tiff (const guint8 *d, gsize len, guint8 **rgb, int64_t *h, int64_t *w)
{
  TiffMemory mem = { d, len, 0 };
  TIFFOpenOptions *opts = TIFFOpenOptionsAlloc ();
  if (!opts)
    return IMG_CORRUPT;
  TIFFOpenOptionsSetErrorHandlerExtR (opts, tiff_quiet, NULL);
  TIFFOpenOptionsSetWarningHandlerExtR (opts, tiff_quiet, NULL);
  TIFF *tif = TIFFClientOpenExt ("memory", "rm", &mem, tiff_read, tiff_write, tiff_seek, tiff_close, tiff_size,
                                 tiff_map, tiff_unmap, opts);
  TIFFOpenOptionsFree (opts);
  if (!tif)
    return IMG_CORRUPT;
  uint32_t width = 0, height = 0;
  TIFFGetField (tif, TIFFTAG_IMAGEWIDTH, &width);
  TIFFGetField (tif, TIFFTAG_IMAGELENGTH, &height);
  ImgStatus st = IMG_CORRUPT;
  uint32_t *raster = NULL;
  guint8 *out = NULL;
  if (width > 0 && height > 0 && (int64_t) width * height <= MAX_IMAGE_PIXELS)
    {
      raster = g_try_new (uint32_t, (gsize) width * height);
      out = g_try_malloc ((gsize) width * height * 3);
    }
  if (raster && out && TIFFReadRGBAImageOriented (tif, width, height, raster, ORIENTATION_TOPLEFT, 0))
    {
      for (gsize i = 0; i < (gsize) width * height; i++)
        {
          out[3 * i] = TIFFGetR (raster[i]);
          out[3 * i + 1] = TIFFGetG (raster[i]);
          out[3 * i + 2] = TIFFGetB (raster[i]);
        }
      *rgb = out;
      out = NULL;
      *h = height;
      *w = width;
      st = IMG_OK;
    }
  g_free (raster);
  g_free (out);
  TIFFClose (tif);
  return st;
}
#else
#define decode_tiff NULL /* the format is still recognised: a clear "cannot decode" error */
#endif

#ifdef OWB_HAVE_LIBOPENJP2
#include <openjpeg.h>

typedef struct {
  const guint8 *data;
  gsize len, pos;
} J2kMemory;

static OPJ_SIZE_T
j2k_read (void *buf, OPJ_SIZE_T n, void *user)
{
  J2kMemory *m = user;
  if (m->pos >= m->len)
    return (OPJ_SIZE_T) -1;
  gsize k = MIN ((gsize) n, m->len - m->pos);
  memcpy (buf, m->data + m->pos, k);
  m->pos += k;
  return k;
}

static OPJ_OFF_T
j2k_skip (OPJ_OFF_T n, void *user)
{
  J2kMemory *m = user;
  if (n < 0 && (gsize) -n > m->pos)
    n = -(OPJ_OFF_T) m->pos;
  else if (n > 0 && (gsize) n > m->len - m->pos)
    n = (OPJ_OFF_T) (m->len - m->pos);
  m->pos += n;
  return n;
}

static OPJ_BOOL
j2k_seek (OPJ_OFF_T off, void *user)
{
  J2kMemory *m = user;
  if (off < 0 || (gsize) off > m->len)
    return OPJ_FALSE;
  m->pos = (gsize) off;
  return OPJ_TRUE;
}

static void
j2k_quiet (const char *msg, void *user)
{
}

/* JP2 files and raw J2K codestreams with 1 to 4 components of equal size (no chroma subsampling). */
static ImgStatus
decode_jpeg2000 (const guint8 *d, gsize len, guint8 **rgb, int64_t *h, int64_t *w)
{
  /* A raw codestream starts with SOC (ff 4f), a JP2 file with its signature box. */
  gboolean raw = len > 0 && d[0] == 0xff;
  J2kMemory mem = { d, len, 0 };
  opj_stream_t *s = opj_stream_create (OPJ_J2K_STREAM_CHUNK_SIZE, OPJ_TRUE);
  opj_codec_t *c = opj_create_decompress (raw ? OPJ_CODEC_J2K : OPJ_CODEC_JP2);
  opj_image_t *img = NULL;
  ImgStatus st = IMG_CORRUPT;
  if (!s || !c)
    goto out;
  opj_stream_set_user_data (s, &mem, NULL);
  opj_stream_set_user_data_length (s, len);
  opj_stream_set_read_function (s, j2k_read);
  opj_stream_set_skip_function (s, j2k_skip);
  opj_stream_set_seek_function (s, j2k_seek);
  opj_set_error_handler (c, j2k_quiet, NULL);
  opj_set_warning_handler (c, j2k_quiet, NULL);
  opj_set_info_handler (c, j2k_quiet, NULL);
  opj_dparameters_t params;
  opj_set_default_decoder_parameters (&params);
  if (!opj_setup_decoder (c, &params) || !opj_read_header (s, c, &img) || !img || img->numcomps < 1)
    goto out;
  int64_t width = img->comps[0].w, height = img->comps[0].h;
  if (width <= 0 || height <= 0 || width * height > MAX_IMAGE_PIXELS)
    goto out;
  if (!opj_decode (c, s, img) || !opj_end_decompress (c, s))
    goto out;
  int nc = img->numcomps >= 3 ? 3 : 1;
  for (int k = 0; k < nc; k++)
    {
      const opj_image_comp_t *cp = &img->comps[k];
      if (cp->w != (OPJ_UINT32) width || cp->h != (OPJ_UINT32) height || !cp->data || cp->prec < 1 || cp->prec > 16)
        {
          goto out;
        }
    }
  if (img->color_space == OPJ_CLRSPC_SYCC || img->color_space == OPJ_CLRSPC_CMYK
      || img->color_space == OPJ_CLRSPC_EYCC)
    {
      goto out;
    }
  guint8 *o = g_try_malloc ((gsize) (width * height * 3));
  if (!o)
    goto out;
  for (int k = 0; k < 3; k++)
    {
      const opj_image_comp_t *cp = &img->comps[nc == 3 ? k : 0];
      int64_t maxv = (G_GINT64_CONSTANT (1) << cp->prec) - 1, shift = cp->sgnd ? (maxv + 1) / 2 : 0;
      for (int64_t i = 0; i < width * height; i++)
        {
          int64_t v = CLAMP ((int64_t) cp->data[i] + shift, 0, maxv);
          o[3 * i + k] = (guint8) (cp->prec >= 8 ? v >> (cp->prec - 8) : (v * 255 + maxv / 2) / maxv);
        }
    }
  *rgb = o;
  *h = height;
  *w = width;
  st = IMG_OK;
out:
  if (img)
    opj_image_destroy (img);
  if (c)
    opj_destroy_codec (c);
  if (s)
    opj_stream_destroy (s);
  return st;
}
#else
#define decode_jpeg2000 NULL /* the format is still recognised: a clear "cannot decode" error */
#endif

static gboolean
has_prefix (const guint8 *d, gsize len, const char *magic, gsize n)
{
  return len >= n && memcmp (d, magic, n) == 0;
}

typedef ImgStatus (*ImgDecodeFunc) (const guint8 *d, gsize len, guint8 **rgb, int64_t *h, int64_t *w);

/* Which format a stream is, by its first bytes. */
static ImgDecodeFunc
sniff_format (const guint8 *d, gsize len, const char **name)
{
  static const struct {
    const char *name, *magic;
    gsize n;
    ImgDecodeFunc decode;
  } signatures[] = {
    { "BMP", "BM", 2, decode_bmp },
    { "PNG", "\x89PNG\r\n\x1a\n", 8, decode_png },
    { "JPEG", "\xff\xd8\xff", 3, decode_jpeg },
    { "TIFF", "II*\0", 4, decode_tiff },
    { "TIFF", "MM\0*", 4, decode_tiff },
    { "JPEG 2000", "\0\0\0\x0cjP  ", 8, decode_jpeg2000 },
    { "JPEG 2000", "\xff\x4f\xff\x51", 4, decode_jpeg2000 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (signatures); i++)
    if (has_prefix (d, len, signatures[i].magic, signatures[i].n))
      {
        *name = signatures[i].name;
        return signatures[i].decode;
      }
  /* P1..P6 and white space; WebP is a RIFF file whose form type is WEBP. */
  if (len >= 3 && d[0] == 'P' && d[1] >= '1' && d[1] <= '6' && g_ascii_isspace (d[2]))
    {
      *name = "PNM";
      return decode_pnm;
    }
  if (len >= 12 && memcmp (d, "RIFF", 4) == 0 && memcmp (d + 8, "WEBP", 4) == 0)
    {
      *name = "WebP";
      return decode_webp;
    }
  *name = NULL;
  return NULL;
}

static gboolean
compute_image_decoder (OwbKernelContext *ctx, GError **error)
{
  const OwbTensor *in = ctx->inputs[0];
  const char *fmt = owb_node_get_string (ctx->node, "pixel_format", "RGB");
  gboolean gray = strcmp (fmt, "Grayscale") == 0, bgr = strcmp (fmt, "BGR") == 0;
  const guint8 *d = in->data;
  gsize len = (gsize) in->nelems;
  guint8 *rgb = NULL;
  int64_t h = 0, w = 0;
  const char *name;
  ImgDecodeFunc decode = sniff_format (d, len, &name);
  ImgStatus st = !name ? IMG_CORRUPT : decode ? decode (d, len, &rgb, &h, &w) : IMG_UNSUPPORTED;
  if (st == IMG_UNSUPPORTED)
    {
      owb_kernel_set_error (ctx, error, OWB_ERROR_UNSUPPORTED_OP,
                            "this build cannot decode %s images (it was built without their decoding library)", name);
      return FALSE;
    }
  /* An undecodable stream gives an empty image, as the operator specifies. */
  if (st != IMG_OK)
    h = w = 0;
  int64_t dims[3] = { h, w, gray ? 1 : 3 };
  OwbTensor *y = owb_kernel_context_new_output (ctx, 0, OWB_TYPE_UINT8, 3, dims, error);
  if (!y)
    {
      g_free (rgb);
      return FALSE;
    }
  guint8 *o = y->data;
  int64_t npix = h * w;
  for (int64_t i = 0; i < npix; i++)
    {
      const guint8 *p = rgb + 3 * i;
      if (gray)
        /* ITU-R 601 luma in 16-bit fixed point, rounded: the usual RGB to L conversion. */
        o[i] = (guint8) ((p[0] * 19595u + p[1] * 38470u + p[2] * 7471u + 0x8000u) >> 16);
      else if (bgr)
        {
          o[3 * i] = p[2];
          o[3 * i + 1] = p[1];
          o[3 * i + 2] = p[0];
        }
      else
        memcpy (o + 3 * i, p, 3);
    }
  g_free (rgb);
  return TRUE;
}

/* ==== the table ==== */

const OwbKernelDef _owb_cpu_kernels_image_decoder[] = {
  { "ImageDecoder", "", 20, 0, OWB_TYPE_BIT (OWB_TYPE_UINT8), 0, NULL, NULL, compute_image_decoder },
  { NULL }
};
