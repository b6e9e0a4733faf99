// The custom requests of the tile_lsp server (the contract between this client and `python -m
// tile_lsp`). Field names are camelCase on the wire. Each method name appears only here.
import { RequestType } from 'vscode-languageclient/node';

export interface TextDocumentIdentifier {
  uri: string;
}

export interface Position {
  line: number;
  character: number;
}

/** Params of every request may carry a work-done token; the server reports `$/progress` on it. */
export interface WorkDoneParams {
  workDoneToken?: string;
}

export interface LayoutParams {
  textDocument: TextDocumentIdentifier;
  position: Position;
  /** User-chosen extents for the dynamic tensor dimensions, keyed by their names ("S0", ...). */
  extents?: Record<string, number>;
  /** A tile index of the view's index space whose elements the picture highlights. */
  index?: number[];
}

export interface LayoutResult {
  title: string;
  svg: string;
  text: string;
  data: object;
  /** Names of the tensor dimensions whose extent is not known, e.g. "S0". */
  dynamicDims: string[];
}

export interface ConvertFromBytecodeParams extends WorkDoneParams {
  /** A file: URI of a .tileirbc file. */
  uri: string;
}

export interface ConvertToBytecodeParams extends WorkDoneParams {
  /** The URI of an open .tileir document. */
  uri: string;
  /** Bytecode version, e.g. "13.3"; the server's setting when absent. */
  version?: string;
}

export interface ConvertResult {
  /** Text for convertFromBytecode; base64 of the bytecode for convertToBytecode. */
  output: string;
}

export interface PtxParams extends WorkDoneParams {
  textDocument: TextDocumentIdentifier;
  kernel?: string;
  arch?: string;
}

export interface PtxResult {
  /** The kernel and the target it was made for (the setting's, or the server's default). */
  kernel: string;
  arch: string;
  ptx: string;
  /** Warnings of the compile (a hint not applied), one line each. */
  notes?: string[];
}

export interface TritonResult {
  /** The kernel and the target it was made for (the setting's, or the server's default). */
  kernel: string;
  arch: string;
  /** The generated Triton Python source (`tileir compile --emit triton`). */
  source: string;
  /** Ops whose code Triton's interpreter cannot run (inline PTX, libdevice). */
  notInterpretable?: string[];
  /** Warnings of the lowering (a hint not applied as asked), one line each. */
  notes?: string[];
}

export interface SassParams extends PtxParams {
  /** "triton" (our lowering, the default) or "tileiras" (NVIDIA's compiler, from the bytecode). */
  compiler?: 'triton' | 'tileiras';
}

export interface SassResult {
  /** The kernel and the target it was made for (the setting's, or the server's default). */
  kernel: string;
  arch: string;
  sass: string;
  notes?: string[];
}

export const layoutRequest = new RequestType<LayoutParams, LayoutResult | null, void>('tileir/layout');
export const convertFromBytecodeRequest = new RequestType<ConvertFromBytecodeParams, ConvertResult, void>(
  'tileir/convertFromBytecode',
);
export const convertToBytecodeRequest = new RequestType<ConvertToBytecodeParams, ConvertResult, void>(
  'tileir/convertToBytecode',
);
export const tritonRequest = new RequestType<PtxParams, TritonResult, void>('tileir/triton');
export const ptxRequest = new RequestType<PtxParams, PtxResult, void>('tileir/ptx');
export const sassRequest = new RequestType<SassParams, SassResult, void>('tileir/sass');
