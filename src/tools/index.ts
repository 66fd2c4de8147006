/**
 * The tools layer's public names: the `Tool` interface, `defineTool`, the built-in coding
 * tools and the approval policy.
 */
export {
  type ApprovalPolicy,
  type BashRule,
  DEFAULT_APPROVAL_POLICY,
  type DecideOptions,
  decide,
  decideStrictest,
  getApprovalPolicySchema,
  type PolicyAction,
  type PolicyCall,
  type PolicyDecision,
  parseApprovalPolicy,
} from './approval-policy.js'
export {
  type BashToolOptions,
  type BuiltinToolsOptions,
  bashTool,
  builtinTools,
  type EditToolOptions,
  editTool,
  type GlobToolOptions,
  type GrepToolOptions,
  globTool,
  grepTool,
  type LsToolOptions,
  lsTool,
  type ReadToolOptions,
  readTool,
  type WorkspaceOptions,
  type WriteToolOptions,
  writeTool,
} from './builtin/index.js'
export { defineTool, type ToolDefinition } from './define-tool.js'
export {
  type ProtectedPaths,
  type ProtectedPathsOptions,
  type ProtectedTarget,
  protectedPaths,
} from './protected-paths.js'
export type { ParsedArguments, Tool, ToolAgent, ToolContext, ToolOutput } from './tool.js'
