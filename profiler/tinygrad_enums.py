"""tinygrad pickles its enums by number (Ops(33)), not by name, so a file alone does not say which op a UOp is.
These are tinygrad 0.14.0's numberings, read from its source by tests/fixtures/tinygrad014/make_fixtures.py
(`--enums`); tinygrad_import.py checks them against each file (a SINK must be a SINK) and warns when they do not fit."""

ENUMS_0_14: dict[str, dict[int, str]] = {
  'tinygrad.uop.Ops': {1: 'SPECIAL', 2: 'BUFFER', 3: 'NOOP', 4: 'REWRITE_ERROR', 5: 'PARAM', 6: 'FUNCTION', 7: 'CALL', 8: 'PROGRAM', 9: 'LINEAR', 10: 'SOURCE', 11: 'BINARY', 12: 'SINK', 13: 'AFTER', 14: 'GROUP', 15: 'STACK', 16: 'TUPLE', 17: 'GETTUPLE', 18: 'GETADDR', 19: 'INDEX', 20: 'SHRINK', 21: 'LOAD', 22: 'STORE', 23: 'WMMA', 24: 'CAST', 25: 'BITCAST', 26: 'EXP2', 27: 'LOG2', 28: 'SIN', 29: 'SQRT', 30: 'RECIPROCAL', 31: 'NEG', 32: 'TRUNC', 33: 'ADD', 34: 'MUL', 35: 'SHL', 36: 'SHR', 37: 'CDIV', 38: 'MAX', 39: 'CMOD', 40: 'CMPLT', 41: 'CMPNE', 42: 'CMPEQ', 43: 'XOR', 44: 'OR', 45: 'AND', 46: 'THREEFRY', 47: 'SUB', 48: 'FDIV', 49: 'POW', 50: 'FLOORDIV', 51: 'FLOORMOD', 52: 'WHERE', 53: 'MULACC', 54: 'BARRIER', 55: 'RANGE', 56: 'IF', 57: 'END', 58: 'ENDIF', 59: 'CONST', 60: 'CUSTOM', 61: 'CUSTOMI', 62: 'INS', 63: 'CONTIGUOUS', 64: 'CONTIGUOUS_BACKWARD', 65: 'DETACH', 66: 'STAGE', 67: 'COPY', 68: 'MSELECT', 69: 'MSTACK', 70: 'CUSTOM_FUNCTION', 71: 'RESHAPE', 72: 'PERMUTE', 73: 'EXPAND', 74: 'PAD', 75: 'FLIP', 76: 'UNSHARD', 77: 'REDUCE', 78: 'ALLREDUCE', 79: 'PYLITERAL'},
  'tinygrad.uop.ops.AxisType': {1: 'DEVICE', 2: 'GLOBAL', 3: 'WARP', 4: 'LOCAL', 5: 'WEAK', 6: 'GROUP_REDUCE', 7: 'REDUCE', 8: 'UPCAST', 9: 'UNROLL', 10: 'THREAD', 11: 'PLACEHOLDER', 12: 'LOOP'},
  'tinygrad.dtype.AddrSpace': {1: 'GLOBAL', 2: 'LOCAL', 3: 'REG', 4: 'ALU'},
  'tinygrad.codegen.opt.OptOps': {1: 'TC', 2: 'UPCAST', 3: 'UNROLL', 4: 'LOCAL', 5: 'THREAD', 6: 'GROUP', 7: 'GROUPTOP', 8: 'NOLOCALS', 9: 'PADTO', 10: 'SWAP'},
}
