// hcpops' provisioning SLO, deployed by main.bicep: cluster creates that
// succeed, sloTarget of them (95%) over 7 days, watched by multi-window
// burn-rate alert rules over the Application Insights component (the SRE
// workbook's, as ARO-HCP's user-journey SLOs): a rule fires when both its
// long and its short window spend the error budget (1 - sloTarget) at least
// burnRate times as fast as the 7 days allow; the short window makes it stop
// soon after the failures do. The query is slo/provisioning_burn.kql,
// documented word for word in docs/functions.md; the runbook is
// docs/runbooks.md#provisioning-slo-burning. A create counts when it ends
// Succeeded or Failed (a Canceled one was superseded by its caller).

targetScope = 'resourceGroup'

param prefix string
param location string
@description('The Application Insights component the rules query.')
param insightsId string
@description('The action group the rules notify; empty: none (they still fire in Azure Monitor).')
param actionGroupId string
param runbookUrl string
@description('The share of cluster creates that must succeed over 7 days, e.g. 0.95.')
param sloTarget string

// The two windows and their thresholds. Over 7 days, 14.4x for an hour
// spends 8.6% of the budget (page), 6x for 6 hours 21% (ticket): with 95%,
// more than 72% resp. 30% of the creates ending Failed in both windows.
var burnWindows = [
  {
    name: 'fast'
    burnRate: '14.4' // 1h and 5m above 14.4 x (1 - sloTarget) failed
    longWindow: '1h'
    shortWindow: '5m'
    windowSize: 'PT1H'
    evaluationFrequency: 'PT5M'
    severity: 1
  }
  {
    name: 'slow'
    burnRate: '6' // 6h and 30m above 6 x (1 - sloTarget) failed
    longWindow: '6h'
    shortWindow: '30m'
    windowSize: 'PT6H'
    evaluationFrequency: 'PT15M'
    severity: 2
  }
]

resource burnAlerts 'Microsoft.Insights/scheduledQueryRules@2023-12-01' = [for w in burnWindows: {
  name: '${prefix}-slo-provisioning-${w.name}'
  location: location
  kind: 'LogAlert'
  properties: {
    displayName: 'hcpops: provisioning SLO burning (${w.name}: ${w.burnRate}x over ${w.longWindow} and ${w.shortWindow})'
    description: 'Cluster creates are failing ${w.burnRate} times faster than the ${sloTarget} over 7 days SLO allows, over both the last ${w.longWindow} and ${w.shortWindow}. Runbook: ${runbookUrl}#provisioning-slo-burning'
    severity: w.severity
    enabled: true
    evaluationFrequency: w.evaluationFrequency
    windowSize: w.windowSize
    scopes: [
      insightsId
    ]
    autoMitigate: true
    criteria: {
      allOf: [
        {
          query: 'let slo_target = ${sloTarget};\nlet burn_rate = ${w.burnRate};\nlet long_window = ${w.longWindow};\nlet short_window = ${w.shortWindow};\n${loadTextContent('slo/provisioning_burn.kql')}'
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
    actions: empty(actionGroupId) ? {} : {
      actionGroups: [
        actionGroupId
      ]
    }
  }
}]
