"""Writes the bitcode of the `nnc.cuda_host_image` attribute in an MLIR file
(nnc-cuda-emulation-image's output) to a file.

usage: extract_host_image.py IN.mlir OUT.bc
"""

import re
import sys

text = open(sys.argv[1], encoding="latin-1").read()
match = re.search(r'nnc\.cuda_host_image = "((?:[^"\\]|\\.)*)"', text)
if not match:
    sys.exit("no nnc.cuda_host_image attribute in " + sys.argv[1])
escaped, data, i = match.group(1), bytearray(), 0
# MLIR escapes a string attribute's bytes as \\, \" or \XX (hex).
while i < len(escaped):
    if escaped[i] != "\\":
        data += escaped[i].encode("latin-1")
        i += 1
    elif escaped[i + 1] in '\\"':
        data += escaped[i + 1].encode("latin-1")
        i += 2
    else:
        data.append(int(escaped[i + 1 : i + 3], 16))
        i += 3
open(sys.argv[2], "wb").write(data)
