// Keys: undo/redo, copy/paste (delete is the canvas's own). Text fields and
// menus keep their keys.
import { useEffect } from "react";

export interface ShortcutActions {
  undo: () => void;
  redo: () => void;
  copy: () => void;
  paste: () => void;
}

export function useShortcuts(actions: ShortcutActions) {
  // Bound anew at every render, so the actions see the current graph.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const tag = (e.target as HTMLElement).tagName;
      if (tag === "INPUT" || tag === "SELECT" || !(e.ctrlKey || e.metaKey)) return;
      const key = e.key.toLowerCase();
      if (key === "z" && !e.shiftKey) actions.undo();
      else if (key === "y" || key === "z") actions.redo();
      else if (key === "c") actions.copy();
      else if (key === "v") actions.paste();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  });
}
