/** How a modified range reads, line by line (line-pairs.ts computes it; a LineDiff keeps each range's once computed). */

export interface Piece {
  rangeId: number;
  /** The new line [newStart, newEnd): one line, or none (the place) for a pure deletion. */
  newStart: number;
  newEnd: number;
  /** The old line paired with the new one, -1 if none. */
  partner: number;
  /** The partner is out of order: the line moved within its range (and was maybe edited). */
  moved: boolean;
  /** The old lines this piece owns, ascending: its partner and the unpaired old lines given to it. */
  oldLines: readonly number[];
}

/** A row of a range in reading order: an in-order pair, or an old line alone, or a new line alone (-1 for none). */
export interface Row {
  old: number;
  new: number;
}

export interface Layout {
  pieces: readonly Piece[];
  rows: readonly Row[];
  /** For each old line of the range (old - range.oldStart), the index of the piece owning it. */
  ownerOfOld: Int32Array;
}
