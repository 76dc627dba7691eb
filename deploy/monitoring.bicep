// hcpops' alerting, deployed by main.bicep: Azure Monitor scheduled-query
// alert rules over the Application Insights component, the action group they
// notify, and a workbook. Every query is a file of alerts/ (or a query of
// workbook.json) documented word for word in docs/functions.md; each rule's
// description links its section of docs/runbooks.md. main.bicep documents
// the parameters.

targetScope = 'resourceGroup'

param prefix string
param location string
@description('The Application Insights component the rules and the workbook query.')
param insightsId string
param alertReceiver string
param runbookUrl string
param stuckAfterMinutes object
param tickBudgetUsedThreshold string
param givenUpBatchesThreshold int
param csAnomalyThreshold int
param notificationAttemptsThreshold int
param csErrorRateThreshold string
param csErrorRateMinCalls int
param csLatencyP99MsThreshold int
param restartsThreshold int

var alertScopes = [
  insightsId
]

resource actionGroup 'Microsoft.Insights/actionGroups@2023-01-01' = if (!empty(alertReceiver)) {
  name: '${prefix}-alerts'
  location: 'global'
  properties: {
    groupShortName: take('${prefix}ops', 12)
    enabled: true
    emailReceivers: startsWith(alertReceiver, 'https://') ? [] : [
      {
        name: 'email'
        emailAddress: alertReceiver
        useCommonAlertSchema: true
      }
    ]
    webhookReceivers: startsWith(alertReceiver, 'https://') ? [
      {
        name: 'webhook'
        serviceUri: alertReceiver
        useCommonAlertSchema: true
      }
    ] : []
  }
}

var alertActions = empty(alertReceiver) ? {} : {
  actionGroups: [
    actionGroup.id
  ]
}

// The stuck rules: one per entry of stuckAfterMinutes, over
// operation.stuck. The kind names are those of the records.
var stuckKinds = {
  cluster: 'cluster'
  nodepool: 'node pool'
  externalauth: 'external auth'
}
var stuckRequests = {
  create: 'Create'
  update: 'Update'
  delete: 'Delete'
  requestcredential: 'RequestCredential'
  revokecredentials: 'RevokeCredentials'
}
var stuckRules = [for t in items(stuckAfterMinutes): {
  key: t.key
  minutes: t.value
  kind: t.key == 'any' ? '' : stuckKinds[split(t.key, '.')[0]]
  request: t.key == 'any' ? '' : stuckRequests[split(t.key, '.')[1]]
}]

resource stuckAlerts 'Microsoft.Insights/scheduledQueryRules@2023-12-01' = [for r in stuckRules: {
  name: '${prefix}-stuck-${replace(r.key, '.', '-')}'
  location: location
  kind: 'LogAlert'
  properties: {
    displayName: r.key == 'any' ? 'hcpops: operation stuck (any, backstop)' : 'hcpops: ${r.kind} ${r.request} stuck'
    description: 'An active ${r.key == 'any' ? '' : '${r.kind} ${r.request} '}operation has run for more than ${r.minutes} minutes and its resource has not reached Succeeded or Failed since; one alert per resource. Runbook: ${runbookUrl}#operation-stuck'
    severity: 3
    enabled: true
    evaluationFrequency: 'PT5M'
    windowSize: 'PT5M'
    // operation.stuck is written once per threshold crossed, at most a day
    // apart: two days back always hold the latest of a stuck operation.
    overrideQueryTimeRange: 'P2D'
    scopes: alertScopes
    autoMitigate: true
    criteria: {
      allOf: [
        {
          query: 'let stuck_kind = "${r.kind}";\nlet stuck_request = "${r.request}";\nlet stuck_after = ${r.minutes}m;\n${loadTextContent('alerts/stuck.kql')}'
          timeAggregation: 'Count'
          operator: 'GreaterThan'
          threshold: 0
          // Per resource, not per operation: a new operation on it (a
          // delete superseding a stuck create) starts a new clock, and must
          // not resolve the alert and open another.
          dimensions: [
            {
              name: 'resource_id'
              operator: 'Include'
              values: [
                '*'
              ]
            }
          ]
          failingPeriods: {
            numberOfEvaluationPeriods: 1
            minFailingPeriodsToAlert: 1
          }
        }
      ]
    }
    actions: alertActions
  }
}]

resource tickAlert 'Microsoft.Insights/scheduledQueryRules@2023-12-01' = {
  name: '${prefix}-tick'
  location: location
  kind: 'LogAlert'
  properties: {
    displayName: 'hcpops: poll tick failed, past its budget or missing'
    description: 'A poll tick failed, was stopped by HCPOPS_POLL_BUDGET, used more than ${tickBudgetUsedThreshold} of it, or none ran in 15 minutes. Runbook: ${runbookUrl}#tick-failed-or-past-its-budget'
    severity: 2
    enabled: true
    evaluationFrequency: 'PT5M'
    windowSize: 'PT15M'
    scopes: alertScopes
    autoMitigate: true
    criteria: {
      allOf: [
        {
          query: 'let budget_used_threshold = ${tickBudgetUsedThreshold};\n${loadTextContent('alerts/tick.kql')}'
          timeAggregation: 'Count'
          operator: 'GreaterThan'
          threshold: 0
          dimensions: [
            {
              name: 'problem'
              operator: 'Include'
              values: [
                '*'
              ]
            }
          ]
          failingPeriods: {
            numberOfEvaluationPeriods: 1
            minFailingPeriodsToAlert: 1
          }
        }
      ]
    }
    actions: alertActions
  }
}

resource givenUpAlert 'Microsoft.Insights/scheduledQueryRules@2023-12-01' = {
  name: '${prefix}-changefeed-given-up'
  location: location
  kind: 'LogAlert'
  properties: {
    displayName: 'hcpops: change-feed batch given up'
    description: 'The last delivery of a change-feed batch failed, so the host checkpointed past it; the tick\'s safety net dispatches its operations after HCPOPS_DISPATCH_GRACE. Runbook: ${runbookUrl}#change-feed-batch-given-up'
    severity: 2
    enabled: true
    evaluationFrequency: 'PT5M'
    windowSize: 'PT15M'
    scopes: alertScopes
    autoMitigate: true
    criteria: {
      allOf: [
        {
          query: loadTextContent('alerts/given_up.kql')
          timeAggregation: 'Count'
          operator: 'GreaterThan'
          threshold: givenUpBatchesThreshold
          failingPeriods: {
            numberOfEvaluationPeriods: 1
            minFailingPeriodsToAlert: 1
          }
        }
      ]
    }
    actions: alertActions
  }
}

resource csAnomalyAlert 'Microsoft.Insights/scheduledQueryRules@2023-12-01' = {
  name: '${prefix}-cs-404-wave'
  location: location
  kind: 'LogAlert'
  properties: {
    displayName: 'hcpops: Clusters Service answered 404 for objects that must exist'
    description: 'A poll tick met Clusters Service answering 404 for objects it had accepted (a 404 wave: a misrouted or emptied CS); no delete completed on those 404s. Runbook: ${runbookUrl}#clusters-service-404-wave'
    severity: 2
    enabled: true
    evaluationFrequency: 'PT5M'
    windowSize: 'PT15M'
    scopes: alertScopes
    autoMitigate: true
    criteria: {
      allOf: [
        {
          query: loadTextContent('alerts/cs_anomaly.kql')
          timeAggregation: 'Count'
          operator: 'GreaterThan'
          threshold: csAnomalyThreshold
          failingPeriods: {
            numberOfEvaluationPeriods: 1
            minFailingPeriodsToAlert: 1
          }
        }
      ]
    }
    actions: alertActions
  }
}

resource notificationsAlert 'Microsoft.Insights/scheduledQueryRules@2023-12-01' = {
  name: '${prefix}-notifications-failing'
  location: location
  kind: 'LogAlert'
  properties: {
    displayName: 'hcpops: ARM notifications failing for an operation'
    description: 'ARM notifications for one operation failed more than ${notificationAttemptsThreshold} times in a row, or were refused; one alert per resource. Runbook: ${runbookUrl}#notifications-failing'
    severity: 3
    enabled: true
    evaluationFrequency: 'PT5M'
    windowSize: 'PT1H'
    scopes: alertScopes
    autoMitigate: true
    criteria: {
      allOf: [
        {
          query: 'let max_attempts = ${notificationAttemptsThreshold};\n${loadTextContent('alerts/notifications.kql')}'
          timeAggregation: 'Count'
          operator: 'GreaterThan'
          threshold: 0
          dimensions: [
            {
              name: 'resource_id'
              operator: 'Include'
              values: [
                '*'
              ]
            }
            {
              name: 'operation_id'
              operator: 'Include'
              values: [
                '*'
              ]
            }
          ]
          failingPeriods: {
            numberOfEvaluationPeriods: 1
            minFailingPeriodsToAlert: 1
          }
        }
      ]
    }
    actions: alertActions
  }
}

resource csErrorsAlert 'Microsoft.Insights/scheduledQueryRules@2023-12-01' = {
  name: '${prefix}-cs-errors'
  location: location
  kind: 'LogAlert'
  properties: {
    displayName: 'hcpops: Clusters Service error rate'
    description: 'More than ${csErrorRateThreshold} of Clusters Service calls failed over both the last 5 minutes and the last hour. Runbook: ${runbookUrl}#clusters-service-error-rate'
    severity: 2
    enabled: true
    evaluationFrequency: 'PT5M'
    windowSize: 'PT1H'
    scopes: alertScopes
    autoMitigate: true
    criteria: {
      allOf: [
        {
          query: 'let error_rate_threshold = ${csErrorRateThreshold};\nlet min_calls = ${csErrorRateMinCalls};\n${loadTextContent('alerts/cs_errors.kql')}'
          timeAggregation: 'Count'
          operator: 'GreaterThan'
          threshold: 0
          failingPeriods: {
            numberOfEvaluationPeriods: 1
            minFailingPeriodsToAlert: 1
          }
        }
      ]
    }
    actions: alertActions
  }
}

resource csLatencyAlert 'Microsoft.Insights/scheduledQueryRules@2023-12-01' = {
  name: '${prefix}-cs-latency'
  location: location
  kind: 'LogAlert'
  properties: {
    displayName: 'hcpops: Clusters Service latency'
    description: 'The p99 of Clusters Service calls exceeded ${csLatencyP99MsThreshold} ms in more than half of the invocations of the last 15 minutes. Runbook: ${runbookUrl}#clusters-service-latency'
    severity: 3
    enabled: true
    evaluationFrequency: 'PT5M'
    windowSize: 'PT15M'
    scopes: alertScopes
    autoMitigate: true
    criteria: {
      allOf: [
        {
          query: 'let p99_ms_threshold = ${csLatencyP99MsThreshold};\n${loadTextContent('alerts/cs_latency.kql')}'
          timeAggregation: 'Count'
          operator: 'GreaterThan'
          threshold: 0
          failingPeriods: {
            numberOfEvaluationPeriods: 1
            minFailingPeriodsToAlert: 1
          }
        }
      ]
    }
    actions: alertActions
  }
}

resource restartsAlert 'Microsoft.Insights/scheduledQueryRules@2023-12-01' = {
  name: '${prefix}-handler-restarts'
  location: location
  kind: 'LogAlert'
  properties: {
    displayName: 'hcpops: handler restarting'
    description: 'The custom handler started more than ${restartsThreshold} times in an hour on one instance. Runbook: ${runbookUrl}#handler-restarting'
    severity: 2
    enabled: true
    evaluationFrequency: 'PT5M'
    windowSize: 'PT1H'
    scopes: alertScopes
    autoMitigate: true
    criteria: {
      allOf: [
        {
          query: 'let max_starts = ${restartsThreshold};\n${loadTextContent('alerts/restarts.kql')}'
          timeAggregation: 'Count'
          operator: 'GreaterThan'
          threshold: 0
          dimensions: [
            {
              name: 'role_instance'
              operator: 'Include'
              values: [
                '*'
              ]
            }
          ]
          failingPeriods: {
            numberOfEvaluationPeriods: 1
            minFailingPeriodsToAlert: 1
          }
        }
      ]
    }
    actions: alertActions
  }
}

// The dashboard: the same records, over time (workbook.json; its queries are
// checked by the telemetry tests too).
resource workbook 'Microsoft.Insights/workbooks@2023-06-01' = {
  name: guid(resourceGroup().id, insightsId, 'hcpops-workbook')
  location: location
  kind: 'shared'
  properties: {
    displayName: '${prefix}: asynchronous operations'
    category: 'workbook'
    sourceId: insightsId
    serializedData: replace(loadTextContent('workbook.json'), '__APP_INSIGHTS_ID__', insightsId)
  }
}

output workbookId string = workbook.id
output actionGroupId string = empty(alertReceiver) ? '' : actionGroup.id
