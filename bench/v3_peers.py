"""The Python peers of bench_v3.sh: write a raw int16 recording (frames x
channels) into one Zarr v3 array, sharded, with the given inner chunks and
blosc codec, the way each library's own documentation does it, with its own
parallelism set to THREADS.

usage: v3_peers.py PEER RAW OUT --channels N --chunks r,c --shards R,C
                   [--cname lz4] [--clevel 5] [--threads 2]
       v3_peers.py PEER --startup   (imports only: the interpreter's share)

PEER is one of:
  zarr-python   zarr 3.4: zarr.create_array + one slice assignment per shard
                row; zarr.config async.concurrency = threading.max_workers =
                codec_pipeline.max_workers = THREADS.
  tensorstore   TensorStore zarr3 driver, spec written out in full; context
                data_copy_concurrency and file_io_concurrency limits =
                THREADS; up to THREADS shard-row writes in flight.
  acquire-zarr  acquire_zarr.ZarrStream, max_threads = THREADS, frames
                appended one inner-chunk row at a time. Its last two dimensions
                must be of kind SPACE, so both are declared SPACE (names
                "time", "channel"); shards are given in chunks per shard.

Every peer reads the input (in the page cache: the benchmark reads it first)
in blocks of whole shard rows (acquire-zarr, a streaming API: inner-chunk
rows) and so writes whole shards: none pays for a read-modify-write. The caller syncs the file system after
the process exits; this script only writes. Prints one JSON line: the peer,
the settings it used and the seconds spent between opening and closing.
"""
import argparse
import importlib.metadata
import json
import os
import time

import numpy as np


def pair(text):
    a, b = text.split(",")
    return int(a), int(b)


def settings(peer, threads):
    """What each peer is told about parallelism, printed with the result."""
    return {
        "zarr-python": {"async.concurrency": threads, "threading.max_workers": threads,
                        "codec_pipeline.max_workers": threads},
        "tensorstore": {"data_copy_concurrency.limit": threads,
                        "file_io_concurrency.limit": threads, "writes_in_flight": threads},
        "acquire-zarr": {"max_threads": threads},
    }[peer]


def zarr_python(raw, out, args):
    import zarr
    from zarr.codecs import BloscCodec, BytesCodec
    zarr.config.set({"async.concurrency": args.threads, "threading.max_workers": args.threads,
                     "codec_pipeline.max_workers": args.threads})
    a = zarr.create_array(zarr.storage.LocalStore(out), shape=raw.shape, dtype="int16",
                          chunks=args.chunks, shards=args.shards, fill_value=0,
                          serializer=BytesCodec(endian="little"),
                          compressors=[BloscCodec(cname=args.cname, clevel=args.clevel,
                                                  shuffle="shuffle", typesize=2, blocksize=0)],
                          zarr_format=3, overwrite=True)
    for r0, block in raw.blocks(args.shards[0]):
        a[r0:r0 + len(block)] = block


def tensorstore(raw, out, args):
    import tensorstore as ts
    le = {"name": "bytes", "configuration": {"endian": "little"}}
    blosc = {"name": "blosc", "configuration": {"cname": args.cname, "clevel": args.clevel,
                                                "shuffle": "shuffle", "typesize": 2,
                                                "blocksize": 0}}
    spec = {
        "driver": "zarr3",
        "kvstore": {"driver": "file", "path": os.path.abspath(out)},
        "metadata": {
            "shape": list(raw.shape), "data_type": "int16", "fill_value": 0,
            "chunk_grid": {"name": "regular",
                           "configuration": {"chunk_shape": list(args.shards)}},
            "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
            "codecs": [{"name": "sharding_indexed", "configuration": {
                "chunk_shape": list(args.chunks), "codecs": [le, blosc],
                "index_codecs": [le, {"name": "crc32c"}], "index_location": "end"}}],
        },
        "context": {"data_copy_concurrency": {"limit": args.threads},
                    "file_io_concurrency": {"limit": args.threads}},
        "create": True, "delete_existing": True,
    }
    a = ts.open(spec).result()
    pending = []
    for r0, block in raw.blocks(args.shards[0]):
        if len(pending) >= args.threads:
            pending.pop(0).result()
        pending.append(a[r0:r0 + len(block)].write(block))
    for f in pending:
        f.result()


def acquire_zarr(raw, out, args):
    import acquire_zarr as aqz
    codec = {"lz4": aqz.CompressionCodec.BLOSC_LZ4, "zstd": aqz.CompressionCodec.BLOSC_ZSTD}
    if args.cname not in codec:
        raise SystemExit("acquire-zarr: blosc cname %r not supported (lz4, zstd only)" % args.cname)
    dims = [aqz.Dimension(name=name, kind=aqz.DimensionType.SPACE, array_size_px=size,
                          chunk_size_px=c, shard_size_chunks=s // c)
            for name, size, c, s in zip(("time", "channel"), raw.shape, args.chunks, args.shards)]
    arr = aqz.ArraySettings(dimensions=dims, data_type=raw.dtype,
                            compression=aqz.CompressionSettings(
                                compressor=aqz.Compressor.BLOSC1, codec=codec[args.cname],
                                level=args.clevel, shuffle=1))
    stream = aqz.ZarrStream(aqz.StreamSettings(arrays=[arr], store_path=os.path.abspath(out),
                                               max_threads=args.threads, overwrite=True))
    for _, block in raw.blocks(args.chunks[0]):
        stream.append(block)
    stream.close()


class Raw:
    """The input, read block by block into fresh arrays: a memmap would
    count the whole page-cached file in the peer's resident set."""

    def __init__(self, path, channels):
        self.path, self.dtype = path, np.dtype("<i2")
        self.shape = (os.path.getsize(path) // (2 * channels), channels)

    def blocks(self, rows):
        with open(self.path, "rb") as f:
            for r0 in range(0, self.shape[0], rows):
                n = min(rows, self.shape[0] - r0)
                yield r0, np.fromfile(f, dtype=self.dtype, count=n * self.shape[1]).reshape(
                    n, self.shape[1])


PEERS = {"zarr-python": (zarr_python, "zarr"), "tensorstore": (tensorstore, "tensorstore"),
         "acquire-zarr": (acquire_zarr, "acquire_zarr")}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("peer", choices=sorted(PEERS))
    p.add_argument("raw", nargs="?")
    p.add_argument("out", nargs="?")
    p.add_argument("--startup", action="store_true")
    p.add_argument("--channels", type=int)
    p.add_argument("--chunks", type=pair)
    p.add_argument("--shards", type=pair)
    p.add_argument("--cname", default="lz4")
    p.add_argument("--clevel", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    write, module = PEERS[args.peer]
    __import__(module)
    if args.startup:
        return
    if not (args.raw and args.out and args.channels and args.chunks and args.shards):
        p.error("RAW, OUT, --channels, --chunks and --shards are needed")
    raw = Raw(args.raw, args.channels)
    start = time.perf_counter()
    write(raw, args.out, args)
    seconds = time.perf_counter() - start
    print(json.dumps({"peer": args.peer, "version": importlib.metadata.version(args.peer.replace("-python", "")),
                      "seconds": round(seconds, 3),
                      "settings": settings(args.peer, args.threads)}))


if __name__ == "__main__":
    main()
