// The parameter panel of the selected node, built from its spec: the
// display and bypass flags, the node's doc and a field per parameter. An
// asset's contents view has its own (no display flag; its test ids
// prefixed).
import { useEffect, useState } from "react";
import type { ParamSpec } from "../api";
import { isExpr, isKeys, keysAt, withKey, type Animated, type EddyNode } from "../graph";

export function ParamPanel({
  node,
  frame,
  onDisplay,
  onBypass,
  onParam,
  onOpenAsset,
  testPrefix = "",
}: {
  node: EddyNode | undefined;
  frame: number;
  onDisplay?: (id: string) => void;
  onBypass: (id: string) => void;
  onParam: (id: string, name: string, value: unknown) => void;
  onOpenAsset: (type: string) => void;
  testPrefix?: string;
}) {
  return (
    <div className="params" data-testid={`${testPrefix}params`}>
      {node ? (
        <>
          <h3>
            {node.id} <small>{node.data.spec.type}</small>
            {onDisplay && (
              <button data-testid="display-flag" className={node.data.display ? "on" : ""} onClick={() => onDisplay(node.id)}>
                display
              </button>
            )}
            <button
              data-testid={`${testPrefix}bypass-flag`}
              className={node.data.bypass ? "on" : ""}
              title="Bypass: the node does not cook; each output passes on its first input of the same type"
              onClick={() => onBypass(node.id)}
            >
              bypass
            </button>
            {node.data.spec.asset && (
              <button data-testid={`${testPrefix}open-asset`} title="Show the asset's contents" onClick={() => onOpenAsset(node.data.spec.type)}>
                contents
              </button>
            )}
          </h3>
          <p className="doc">{node.data.spec.doc}</p>
          {node.data.spec.params.map((p) => (
            <ParamField
              key={p.name}
              spec={p}
              value={node.data.params[p.name]}
              frame={frame}
              testid={`${testPrefix}param-${p.name}`}
              onChange={(v) => onParam(node.id, p.name, v)}
            />
          ))}
        </>
      ) : (
        <p className="doc">Select a node to edit its parameters; double-click one to display it.</p>
      )}
    </div>
  );
}

// One parameter: a checkbox, a menu, or text fields (a vec3's components
// each its own) that commit on Enter or on leaving them.
function ParamField({
  spec,
  value,
  frame,
  testid,
  onChange,
}: {
  spec: ParamSpec;
  value: unknown;
  frame: number;
  testid: string;
  onChange: (v: unknown) => void;
}) {
  const title = `${spec.doc}${spec.unit ? ` (${spec.unit})` : ""}${spec.min !== undefined ? ` min ${spec.min}` : ""}${
    spec.max !== undefined ? ` max ${spec.max}` : ""
  }`;
  const label = (
    <span className="param-name" title={title}>
      {spec.name}
      {spec.unit && <small> {spec.unit}</small>}
    </span>
  );
  if (spec.type === "bool")
    return (
      <label className="param">
        {label}
        <input type="checkbox" data-testid={testid} checked={!!value} onChange={(e) => onChange(e.target.checked)} />
      </label>
    );
  if (spec.type === "enum")
    return (
      <label className="param">
        {label}
        <select data-testid={testid} value={String(value)} onChange={(e) => onChange(e.target.value)}>
          {spec.items?.map((i) => (
            <option key={i}>{i}</option>
          ))}
        </select>
      </label>
    );
  if (spec.type === "float" || spec.type === "int")
    return (
      <label className="param">
        {label}
        <NumberField testid={testid} value={value as Animated} frame={frame} int={spec.type === "int"} onChange={onChange} />
      </label>
    );
  if (spec.type === "vec3") {
    const v = (Array.isArray(value) ? value : [0, 0, 0]) as Animated[];
    return (
      <label className="param">
        {label}
        <span className="vec3">
          {[0, 1, 2].map((c) => (
            <NumberField
              key={c}
              testid={`${testid}-${c}`}
              value={v[c]}
              frame={frame}
              int={false}
              onChange={(x) => onChange(v.map((old, k) => (k === c ? x : old)))}
            />
          ))}
        </span>
      </label>
    );
  }
  return <TextField testid={testid} label={label} value={String(value ?? "")} onChange={onChange} />;
}

function TextField({ testid, label, value, onChange }: { testid: string; label: JSX.Element; value: string; onChange: (v: unknown) => void }) {
  const [text, setText] = useState(value);
  useEffect(() => setText(value), [value]);
  return (
    <label className="param">
      {label}
      <input
        data-testid={testid}
        value={text}
        onChange={(e) => setText(e.target.value)}
        onBlur={() => onChange(text)}
        onKeyDown={(e) => e.key === "Enter" && onChange(text)}
      />
    </label>
  );
}

// A number, or in its place an expression (any text that is not a number,
// e.g. 0.5 * sin(2 * pi * $T)) or keyframes, shown at the current frame and
// marked. The key button sets a key at the current frame to the value shown.
function NumberField({
  testid,
  value,
  frame,
  int,
  onChange,
}: {
  testid: string;
  value: Animated;
  frame: number;
  int: boolean;
  onChange: (v: unknown) => void;
}) {
  const shown = isExpr(value) ? value.expr : isKeys(value) ? String(keysAt(value, frame)) : String(value ?? "");
  const [text, setText] = useState(shown);
  useEffect(() => setText(shown), [shown]);
  const commit = () => {
    const t = text.trim();
    if (t === shown) return;
    const n = Number(t);
    if (t !== "" && !Number.isNaN(n)) {
      // On keyframes a number sets the key at this frame, as in Houdini.
      onChange(isKeys(value) ? withKey(value, frame, n) : int ? Math.round(n) : n);
    } else if (t !== "") {
      onChange({ expr: t });
    }
  };
  const kind = isExpr(value) ? "expression" : isKeys(value) ? "keys" : "";
  return (
    <span className={`number ${kind}`}>
      <input
        data-testid={testid}
        data-animated={kind}
        title={
          isExpr(value)
            ? "expression ($F, $T, $FPS, $FSTART, $FEND)"
            : isKeys(value)
              ? `keys at frames ${value.keys.map(([f]) => f).join(", ")}`
              : "a number, or an expression such as 0.1 * $F"
        }
        value={text}
        onChange={(e) => setText(e.target.value)}
        onBlur={commit}
        onKeyDown={(e) => e.key === "Enter" && commit()}
      />
      <button
        className={`key ${isKeys(value) && value.keys.some(([f]) => f === frame) ? "on" : ""}`}
        data-testid={`${testid}-key`}
        title="Set a key at the current frame to this value"
        disabled={isExpr(value) || Number.isNaN(Number(text))}
        onClick={(e) => {
          e.preventDefault();
          onChange(withKey(value, frame, Number(text)));
        }}
      >
        ◆
      </button>
    </span>
  );
}
