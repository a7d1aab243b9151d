// Undo and redo: stacks of snapshots, the last 100 edits deep.
import { useMemo, useRef } from "react";

export function useHistory<S>() {
  const undo = useRef<S[]>([]);
  const redo = useRef<S[]>([]);
  return useMemo(
    () => ({
      // Before an edit: keeps the state it changes, and forgets what was undone.
      remember(s: S) {
        undo.current.push(s);
        if (undo.current.length > 100) undo.current.shift();
        redo.current = [];
      },
      // The state to go back to (current kept for redo), or undefined when there is none.
      undo(current: S): S | undefined {
        if (!undo.current.length) return undefined;
        redo.current.push(current);
        return undo.current.pop();
      },
      redo(current: S): S | undefined {
        if (!redo.current.length) return undefined;
        undo.current.push(current);
        return redo.current.pop();
      },
      clear() {
        undo.current = [];
        redo.current = [];
      },
    }),
    [],
  );
}
